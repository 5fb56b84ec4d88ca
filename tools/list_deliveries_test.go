package tools

import (
	"strconv"
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// addDeliveries creates webhook stream s-hook with an outbound URL and two
// deliveries on it: the first failed once with 503 then was delivered, the
// second is waiting for its retry after a 500.
func addDeliveries(t *testing.T, f fixture) {
	ctx := t.Context()
	st := f.env.Store
	must(t)(st.CreateStream(ctx, store.OwnerWorker, domain.Stream{ID: "s-hook", Name: "hook",
		Transport: domain.Transport{Kind: domain.TransportKind("webhook"), Config: []byte(`{"outbound_url":"https://example.com/in"}`)}}))
	for i, codes := range [][]int{{503, 200}, {500}} {
		ev, err := st.Append(ctx, domain.Event{StreamID: "s-hook", Source: "w-maya", Message: domain.Message{Body: "out"}}, store.AppendOptions{})
		must(t)(ev, err)
		must(t)(nil, st.EnqueueDeliveries(ctx, "outbound", ev.Seq, []domain.Delivery{{EventID: ev.ID, EventSeq: ev.Seq, StreamID: "s-hook", Kind: domain.TransportKind("webhook")}}))
		id := int64(i + 1)
		for n, code := range codes {
			must(t)(st.ClaimDelivery(ctx, id, f.clock.Now(), f.clock.Now()))
			res := store.DeliveryResult{Attempt: domain.DeliveryAttempt{Attempt: n + 1, StartedAt: f.clock.Now(), Duration: time.Second, Status: code},
				Status: domain.DeliveryDelivered}
			if code >= 300 {
				res.Status, res.NextAttemptAt = domain.DeliveryPending, f.clock.Now()
				res.Attempt.Error = "remote answered " + strconv.Itoa(code)
			}
			must(t)(nil, st.FinishDelivery(ctx, id, res))
		}
	}
}

// deliveryView is the part of a delivery this table states (event ids are random).
type deliveryView struct {
	ID            int64                    `json:"id"`
	StreamID      string                   `json:"streamId"`
	Status        domain.DeliveryStatus    `json:"status"`
	Attempts      int                      `json:"attempts"`
	NextAttemptAt *time.Time               `json:"nextAttemptAt"`
	Log           []domain.DeliveryAttempt `json:"log"`
}

func TestListDeliveries(t *testing.T) {
	type out struct {
		Deliveries      []deliveryView `json:"deliveries"`
		DisabledStreams []string       `json:"disabledStreams"`
	}
	attempt := func(n, code int, err string) domain.DeliveryAttempt {
		return domain.DeliveryAttempt{Attempt: n, StartedAt: t0, Duration: time.Second, Status: code, Error: err}
	}
	delivered := deliveryView{ID: 1, StreamID: "s-hook", Status: domain.DeliveryDelivered, Attempts: 2,
		Log: []domain.DeliveryAttempt{attempt(1, 503, "remote answered 503"), attempt(2, 200, "")}}
	next := t0
	waiting := deliveryView{ID: 2, StreamID: "s-hook", Status: domain.DeliveryPending, Attempts: 1, NextAttemptAt: &next,
		Log: []domain.DeliveryAttempt{attempt(1, 500, "remote answered 500")}}
	none := out{Deliveries: []deliveryView{}, DisabledStreams: []string{}}
	runTable(t, "list_deliveries", []toolCase[out]{
		{name: "none yet", want: none},
		{name: "newest first, with every attempt", setup: addDeliveries, want: out{Deliveries: []deliveryView{waiting, delivered}, DisabledStreams: []string{}}},
		{name: "by status", setup: addDeliveries, args: map[string]any{"status": "delivered"}, want: out{Deliveries: []deliveryView{delivered}, DisabledStreams: []string{}}},
		{name: "by stream", setup: addDeliveries, args: map[string]any{"stream": "s-inbox"}, want: none},
		{name: "limit", setup: addDeliveries, args: map[string]any{"limit": 1}, want: out{Deliveries: []deliveryView{waiting}, DisabledStreams: []string{}}},
		{name: "unknown status lists the valid ones", args: map[string]any{"status": "lost"},
			wantErr: []string{`status: unknown delivery status "lost" (valid: "pending", "delivered", "failed", "disabled")`}},
		{name: "unknown stream", args: map[string]any{"stream": "s-nope"}, wantErr: []string{`stream "s-nope": not found`}, wantIs: domain.ErrNotFound},
		{name: "limit over the cap", args: map[string]any{"limit": 501}, wantErr: []string{"limit: must be between 1 and 500"}},
	})
}
