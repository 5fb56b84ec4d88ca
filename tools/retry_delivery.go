package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

type retryDeliveryIn struct {
	Delivery int64  `json:"delivery,omitempty" jsonschema:"the id of the delivery to send again (an integer, as list_deliveries gives it); it must be failed, or disabled with its endpoint enabled again"`
	Stream   string `json:"stream,omitempty" jsonschema:"instead of one delivery: every failed delivery of this stream (s-…), up to 500 a call, oldest first"`
}

type retryDeliveryOut struct {
	// Requeued are the deliveries queued again: pending, due now.
	Requeued []domain.Delivery `json:"requeued"`
}

// retryDelivery is the way back from a delivery given up for good: once
// an operator has fixed the cause (the stream's outbound_url, a setting),
// what failed goes out again instead of staying lost.
func retryDelivery() Tool {
	return define("retry_delivery", "Send a failed outbound delivery again once its cause is fixed, or every failed one of a stream: queued at once "+
		"with a fresh set of attempts, its log kept. A delivered or pending one is refused, so nothing goes out twice.",
		func(ctx context.Context, env *Env, in retryDeliveryIn) (retryDeliveryOut, error) {
			switch {
			case in.Delivery != 0 && in.Stream != "":
				return retryDeliveryOut{}, domain.Invalid("stream", "give a delivery or a stream, not both")
			case in.Stream != "":
				if _, err := env.Store.GetStream(ctx, in.Stream); err != nil {
					return retryDeliveryOut{}, err
				}
				ds, err := env.Store.RetryFailedDeliveries(ctx, env.Caller, in.Stream, store.MaxReadLimit)
				if err != nil {
					return retryDeliveryOut{}, err
				}
				return retryDeliveryOut{Requeued: orEmpty(ds)}, nil
			case in.Delivery == 0:
				return retryDeliveryOut{}, domain.Invalid("delivery", "is required: the id of a failed delivery (list_deliveries status=failed), or give a stream instead")
			}
			d, err := env.Store.RetryDelivery(ctx, env.Caller, in.Delivery)
			if err != nil {
				return retryDeliveryOut{}, err
			}
			return retryDeliveryOut{Requeued: []domain.Delivery{d}}, nil
		}).annotated("Retry delivery", idempotent|openWorld)
}
