package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

// TestOutboundEvents: only worker-published events on streams of the asked
// kinds, inside the window, and the log's end as the safe cursor.
func TestOutboundEvents(t *testing.T) {
	t.Parallel()
	st := storetest.NewWith(t, store.Options{Transports: testTransports})
	seed(t, st)
	ctx := t.Context()
	if _, err := st.CreateStream(ctx, "w-owner", domain.Stream{ID: "s-hook", Name: "hook", Transport: domain.Transport{Kind: kindWebhook}}); err != nil {
		t.Fatal(err)
	}
	app := func(stream, source, body string) domain.Event {
		ev, err := st.Append(ctx, domain.Event{StreamID: stream, Source: source, Message: domain.Message{Body: body}}, store.AppendOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return ev
	}
	first := app("s-hook", "w-owner", "out 1")
	app("s-hook", "", "inbound")
	app("s-a", "w-owner", "local")
	last := app("s-hook", "w-owner", "out 2")

	bodies := func(evs []domain.Event) []string {
		var out []string
		for _, ev := range evs {
			out = append(out, ev.Message.Body)
		}
		return out
	}
	tests := []struct {
		name  string
		kinds []domain.TransportKind
		since int64
		limit int
		want  []string
	}{
		{"webhook streams, worker events only", []domain.TransportKind{kindWebhook}, 0, 10, []string{"out 1", "out 2"}},
		{"after a cursor", []domain.TransportKind{kindWebhook}, first.Seq, 10, []string{"out 2"}},
		{"limited", []domain.TransportKind{kindWebhook}, 0, 1, []string{"out 1"}},
		{"no stream of the kind", []domain.TransportKind{kindEmail}, 0, 10, nil},
		{"no kinds", nil, 0, 10, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs, upTo, err := st.OutboundEvents(ctx, tt.kinds, tt.since, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, bodies(evs)); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if upTo != last.Seq {
				t.Errorf("upTo = %d, want the last seq %d", upTo, last.Seq)
			}
		})
	}
}

// TestDeliveryLifecycle: enqueueing is idempotent, a claim is exclusive,
// and disabling a stream stops its other pending deliveries.
func TestDeliveryLifecycle(t *testing.T) {
	t.Parallel()
	st := storetest.NewWith(t, store.Options{Transports: testTransports})
	seed(t, st)
	ctx := t.Context()
	var ds []domain.Delivery
	for range 2 {
		ev, err := st.Append(ctx, domain.Event{StreamID: "s-a", Source: "w-owner", Message: domain.Message{Body: "x"}}, store.AppendOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ds = append(ds, domain.Delivery{EventID: ev.ID, EventSeq: ev.Seq, StreamID: "s-a", Kind: kindWebhook})
	}
	for range 2 { // the second enqueue (a re-read after a crash) adds nothing
		if err := st.EnqueueDeliveries(ctx, "c", ds[1].EventSeq, ds); err != nil {
			t.Fatal(err)
		}
	}
	if cur, err := st.DeliveryCursor(ctx, "c"); err != nil || cur != ds[1].EventSeq {
		t.Errorf("cursor = %d, %v; want %d", cur, err, ds[1].EventSeq)
	}
	if cur, err := st.DeliveryCursor(ctx, "other"); err != nil || cur != 0 {
		t.Errorf("unknown cursor = %d, %v; want 0", cur, err)
	}
	now := st.Now()
	due, err := st.DueDeliveries(ctx, []domain.TransportKind{kindWebhook}, now, 10)
	if err != nil || len(due) != 2 {
		t.Fatalf("due = %d deliveries, %v; want 2", len(due), err)
	}
	if _, err := st.ClaimDelivery(ctx, due[0].ID, now, now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, err := st.ClaimDelivery(ctx, due[0].ID, now, now.Add(time.Minute)); !errors.Is(err, domain.ErrConflict) {
		t.Errorf("second claim: %v, want ErrConflict", err)
	}
	if at, ok, err := st.NextDeliveryAt(ctx, []domain.TransportKind{kindWebhook}); err != nil || !ok || at.After(now) {
		t.Errorf("next due = %v %v %v, want already due (the unclaimed one)", at, ok, err)
	}
	err = st.FinishDelivery(ctx, due[0].ID, store.DeliveryResult{Attempt: domain.DeliveryAttempt{Attempt: 1, Status: 410, Error: "gone"},
		Status: domain.DeliveryDisabled, DisableStream: true})
	if err != nil {
		t.Fatal(err)
	}
	all, _ := st.ListDeliveries(ctx, store.DeliveryQuery{})
	for _, d := range all {
		if d.Status != domain.DeliveryDisabled {
			t.Errorf("delivery %d is %s, want disabled", d.ID, d.Status)
		}
	}
	if _, ok, _ := st.NextDeliveryAt(ctx, []domain.TransportKind{kindWebhook}); ok {
		t.Error("a delivery is still pending on a disabled stream")
	}
}
