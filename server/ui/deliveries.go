package ui

import (
	"context"
	"slices"

	"github.com/helixml/helix-org/domain"
)

// outbound is what a stream's page shows of what it sends out: its latest
// deliveries, a failed one with the Resend (retry_delivery) it may have.
type outbound struct {
	Deliveries []delivery
	// Disabled says the stream's remote answered 410 Gone, so nothing
	// more is sent until enable_endpoint.
	Disabled bool
	// Archived says the stream is archived: nothing more is sent, ever.
	Archived bool
}

type delivery struct {
	domain.Delivery
	// Resend: the viewer may send it again now (retry_delivery).
	Resend bool
}

// streamOutbound reads the stream's latest deliveries through
// list_deliveries as the viewer; nil when the viewer may not list them,
// or the stream has sent nothing.
func streamOutbound(ctx context.Context, v *viewer, st domain.Stream) *outbound {
	if st.Transport.Kind == domain.TransportLocal || !v.Can("list_deliveries") {
		return nil
	}
	got, err := invoke[struct {
		Deliveries      []domain.Delivery
		DisabledStreams []string
	}](ctx, v, "list_deliveries", map[string]any{"stream": st.ID, "limit": 20})
	if err != nil || len(got.Deliveries) == 0 {
		return nil
	}
	out := &outbound{Disabled: slices.Contains(got.DisabledStreams, st.ID), Archived: st.ArchivedAt != nil}
	for _, d := range got.Deliveries {
		again := !out.Archived && (d.Status == domain.DeliveryFailed || d.Status == domain.DeliveryDisabled && !out.Disabled)
		out.Deliveries = append(out.Deliveries, delivery{Delivery: d, Resend: again && v.Can("retry_delivery")})
	}
	return out
}
