package tools

import (
	"testing"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// disableHook adds addDeliveries' stream and has its waiting delivery's
// next attempt answered 410 Gone, which disables s-hook's endpoint.
func disableHook(t *testing.T, f fixture) {
	addDeliveries(t, f)
	ctx := t.Context()
	must(t)(f.env.Store.ClaimDelivery(ctx, 2, f.clock.Now(), f.clock.Now()))
	must(t)(nil, f.env.Store.FinishDelivery(ctx, 2, store.DeliveryResult{
		Attempt: domain.DeliveryAttempt{Attempt: 2, StartedAt: f.clock.Now(), Status: 410, Error: "remote answered 410 Gone"},
		Status:  domain.DeliveryDisabled, DisableStream: true}))
}

func TestEnableEndpoint(t *testing.T) {
	runTable(t, "enable_endpoint", []toolCase[enableEndpointOut]{
		{name: "a disabled endpoint delivers again", setup: disableHook, args: map[string]any{"stream": "s-hook"},
			want: enableEndpointOut{Stream: "s-hook", Enabled: true},
			check: func(t *testing.T, f fixture, _ enableEndpointOut) {
				ctx := t.Context()
				st := f.env.Store
				if ids, err := st.DisabledEndpoints(ctx); err != nil || len(ids) != 0 {
					t.Errorf("disabled endpoints = %v, %v; want none", ids, err)
				}
				// What was refused stays refused; what comes next goes out.
				old, err := st.ListDeliveries(ctx, store.DeliveryQuery{Status: domain.DeliveryDisabled})
				if err != nil || len(old) != 1 || old[0].ID != 2 {
					t.Errorf("disabled deliveries = %+v, %v; want delivery 2 only", old, err)
				}
				ev, err := st.Append(ctx, domain.Event{StreamID: "s-hook", Source: "w-maya", Message: domain.Message{Body: "again"}}, store.AppendOptions{})
				must(t)(ev, err)
				must(t)(nil, st.EnqueueDeliveries(ctx, "outbound", ev.Seq, []domain.Delivery{{EventID: ev.ID, EventSeq: ev.Seq, StreamID: "s-hook", Kind: domain.TransportKind("webhook")}}))
				next, err := st.ListDeliveries(ctx, store.DeliveryQuery{EventID: ev.ID})
				if err != nil || len(next) != 1 || next[0].Status != domain.DeliveryPending {
					t.Errorf("the next event's delivery = %+v, %v; want pending", next, err)
				}
				// The owner's act is on the audit trail.
				evs, err := st.ReadEvents(ctx, store.EventQuery{StreamIDs: []string{"s-org"}})
				must(t)(evs, err)
				if last := evs[len(evs)-1]; last.Message.Subject != "enable_endpoint s-hook" {
					t.Errorf("last s-org event = %q, want the enable_endpoint", last.Message.Subject)
				}
			}},
		{name: "missing stream", args: map[string]any{}, wantErr: []string{"stream: is required"}},
		{name: "unknown stream", args: map[string]any{"stream": "s-nope"}, wantErr: []string{`stream "s-nope": not found`}, wantIs: domain.ErrNotFound},
		{name: "an endpoint that is not disabled", setup: addDeliveries, args: map[string]any{"stream": "s-hook"},
			wantErr: []string{`stream "s-hook" has no disabled endpoint`}, wantIs: domain.ErrNotFound},
	})
}
