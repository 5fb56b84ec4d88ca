package tools

import (
	"context"
	"slices"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

type listDeliveriesIn struct {
	Stream string `json:"stream,omitempty" jsonschema:"only deliveries of this stream (s-…)"`
	Event  string `json:"event,omitempty" jsonschema:"only deliveries of this event (e-…)"`
	Status string `json:"status,omitempty" jsonschema:"only deliveries in this state"`
	Limit  int    `json:"limit,omitempty" jsonschema:"at most this many, newest first; 1 to 500"`
}

type listDeliveriesOut struct {
	Deliveries []domain.Delivery `json:"deliveries"`
	// DisabledStreams lists streams whose remote answered 410 Gone; their
	// events are no longer sent.
	DisabledStreams []string `json:"disabledStreams"`
}

func listDeliveries() Tool {
	return define("list_deliveries", "List outbound deliveries (webhook, email, …), newest first, with every attempt and its outcome.",
		func(ctx context.Context, env *Env, in listDeliveriesIn) (listDeliveriesOut, error) {
			if in.Limit < 0 || in.Limit > store.MaxReadLimit {
				return listDeliveriesOut{}, domain.Invalid("limit", "must be between 1 and %d", store.MaxReadLimit)
			}
			status := domain.DeliveryStatus(in.Status)
			if in.Status != "" && !slices.Contains(domain.DeliveryStatuses, status) {
				return listDeliveriesOut{}, domain.EnumError("status", "delivery status", status, domain.DeliveryStatuses)
			}
			if in.Stream != "" {
				if _, err := env.Store.GetStream(ctx, in.Stream); err != nil {
					return listDeliveriesOut{}, err
				}
			}
			ds, err := env.Store.ListDeliveries(ctx, store.DeliveryQuery{StreamID: in.Stream, EventID: in.Event, Status: status, Limit: in.Limit})
			if err != nil {
				return listDeliveriesOut{}, err
			}
			disabled, err := env.Store.DisabledEndpoints(ctx)
			return listDeliveriesOut{Deliveries: orEmpty(ds), DisabledStreams: orEmpty(disabled)}, err
		}, enum("status", domain.DeliveryStatuses)).annotated("List deliveries", readOnly|idempotent)
}
