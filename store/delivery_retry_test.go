package store_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

// retryRig is a store on a clock that moves only when told, with the
// webhook streams s-hook and s-gone.
type retryRig struct {
	st    *store.Store
	clock *storetest.Clock
}

func newRetryRig(t *testing.T) retryRig {
	t.Helper()
	clock := storetest.NewClock(time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC))
	st := storetest.NewWith(t, store.Options{Now: clock.Now, Transports: testTransports})
	seed(t, st)
	for _, id := range []string{"s-hook", "s-gone"} {
		if _, err := st.CreateStream(t.Context(), "w-owner", domain.Stream{ID: id, Name: id, Transport: domain.Transport{Kind: kindWebhook}}); err != nil {
			t.Fatal(err)
		}
	}
	return retryRig{st: st, clock: clock}
}

// deliver publishes an event on stream and ends one attempt at its
// delivery in each of the given statuses in turn, a minute apart; it
// returns the delivery's id.
func (r retryRig) deliver(t *testing.T, stream string, ends ...domain.DeliveryStatus) int64 {
	t.Helper()
	ctx := t.Context()
	ev, err := r.st.Append(ctx, domain.Event{StreamID: stream, Source: "w-owner", Message: domain.Message{Body: "out"}}, store.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.st.EnqueueDeliveries(ctx, "c", ev.Seq, []domain.Delivery{{EventID: ev.ID, EventSeq: ev.Seq, StreamID: stream, Kind: kindWebhook}}); err != nil {
		t.Fatal(err)
	}
	ds, err := r.st.ListDeliveries(ctx, store.DeliveryQuery{EventID: ev.ID})
	if err != nil || len(ds) != 1 {
		t.Fatalf("the delivery of %s: %v, %v", ev.ID, ds, err)
	}
	for _, end := range ends {
		now := r.clock.Now()
		d, err := r.st.ClaimDelivery(ctx, ds[0].ID, now, now.Add(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		res := store.DeliveryResult{Attempt: domain.DeliveryAttempt{Attempt: d.Attempts, StartedAt: now, Status: 200}, Status: end}
		if end != domain.DeliveryDelivered {
			res.Attempt.Status, res.Attempt.Error = 503, "remote answered 503"
		}
		if end == domain.DeliveryPending {
			res.NextAttemptAt = now.Add(time.Minute)
		}
		if end == domain.DeliveryDisabled {
			res.Attempt.Status, res.Attempt.Error, res.DisableStream = 410, "remote answered 410 Gone", true
		}
		if err := r.st.FinishDelivery(ctx, d.ID, res); err != nil {
			t.Fatal(err)
		}
		r.clock.Advance(time.Minute)
	}
	return ds[0].ID
}

func (r retryRig) get(t *testing.T, id int64) domain.Delivery {
	t.Helper()
	ds, err := r.st.ListDeliveries(t.Context(), store.DeliveryQuery{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		if d.ID == id {
			return d
		}
	}
	t.Fatalf("no delivery %d", id)
	return domain.Delivery{}
}

// TestRetryDelivery: a failed delivery, and a disabled one whose endpoint
// is enabled again, go back to pending, due now, their log kept and a
// fresh budget of attempts counted from it; the act is on the audit
// trail. A delivered or pending one, or one whose endpoint is still
// disabled, is refused and left as it was, so nothing is sent twice.
func TestRetryDelivery(t *testing.T) {
	t.Parallel()
	failed, pending, delivered, disabled := domain.DeliveryFailed, domain.DeliveryPending, domain.DeliveryDelivered, domain.DeliveryDisabled
	tests := []struct {
		name string
		// setup makes the deliveries and returns the one to retry.
		setup   func(t *testing.T, r retryRig) int64
		wantErr string
		wantIs  error
	}{
		{name: "failed after three attempts", setup: func(t *testing.T, r retryRig) int64 {
			return r.deliver(t, "s-hook", pending, pending, failed)
		}},
		{name: "failed at once (a permanent error)", setup: func(t *testing.T, r retryRig) int64 {
			return r.deliver(t, "s-hook", failed)
		}},
		{name: "disabled, its endpoint enabled since", setup: func(t *testing.T, r retryRig) int64 {
			id := r.deliver(t, "s-gone", disabled)
			if err := r.st.EnableEndpoint(t.Context(), "w-owner", "s-gone"); err != nil {
				t.Fatal(err)
			}
			return id
		}},
		{name: "delivered", setup: func(t *testing.T, r retryRig) int64 {
			return r.deliver(t, "s-hook", pending, delivered)
		}, wantErr: "delivery 1: it was delivered (attempt 2); sending it again would deliver it twice", wantIs: domain.ErrConflict},
		{name: "pending", setup: func(t *testing.T, r retryRig) int64 {
			return r.deliver(t, "s-hook", pending)
		}, wantErr: "delivery 1: it is pending already: the outbox sends it when it is due", wantIs: domain.ErrConflict},
		{name: "disabled, its endpoint still disabled", setup: func(t *testing.T, r retryRig) int64 {
			return r.deliver(t, "s-gone", disabled)
		}, wantErr: "delivery 1: stream s-gone's endpoint is disabled (its remote answered 410 Gone); enable_endpoint s-gone first", wantIs: domain.ErrConflict},
		{name: "failed, on a stream whose endpoint was disabled since", setup: func(t *testing.T, r retryRig) int64 {
			id := r.deliver(t, "s-gone", failed)
			r.deliver(t, "s-gone", disabled)
			return id
		}, wantErr: "stream s-gone's endpoint is disabled", wantIs: domain.ErrConflict},
		{name: "unknown", setup: func(*testing.T, retryRig) int64 { return 99 }, wantErr: "delivery 99: not found", wantIs: domain.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newRetryRig(t)
			ctx := t.Context()
			id := tt.setup(t, r)
			before, _ := r.st.ListDeliveries(ctx, store.DeliveryQuery{})
			seq, _ := r.st.LastSeq(ctx)
			got, err := r.st.RetryDelivery(ctx, "w-owner", id)
			if tt.wantIs != nil {
				if !errors.Is(err, tt.wantIs) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("retry = %v, want %v saying %q", err, tt.wantIs, tt.wantErr)
				}
				after, _ := r.st.ListDeliveries(ctx, store.DeliveryQuery{})
				if diff := cmp.Diff(before, after); diff != "" {
					t.Errorf("a refused retry changed the deliveries (-before +after):\n%s", diff)
				}
				if now, _ := r.st.LastSeq(ctx); now != seq {
					t.Errorf("a refused retry was audited: last seq %d → %d", seq, now)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			old := r.get(t, id)
			old.Status, old.NextAttemptAt, old.RetriedAfter = pending, new(r.clock.Now()), old.Attempts
			if diff := cmp.Diff(old.Log, r.get(t, id).Log); diff != "" {
				t.Errorf("the log (-before +after):\n%s", diff)
			}
			old.Log = nil
			if diff := cmp.Diff(old, got); diff != "" {
				t.Errorf("retried delivery (-want +got):\n%s", diff)
			}
			if got.RetriedAfter == 0 || got.Attempts != got.RetriedAfter {
				t.Errorf("attempts %d, retried after %d: want a fresh budget counted from the attempts made", got.Attempts, got.RetriedAfter)
			}
			due, err := r.st.DueDeliveries(ctx, []domain.TransportKind{kindWebhook}, r.clock.Now(), 10)
			if err != nil || len(due) != 1 || due[0].ID != id {
				t.Errorf("due now = %v, %v; want the retried delivery", due, err)
			}
			evs, err := r.st.ReadEvents(ctx, store.EventQuery{StreamIDs: []string{domain.StreamOrg}})
			if err != nil {
				t.Fatal(err)
			}
			if last := evs[len(evs)-1]; last.Message.Subject != "retry_delivery "+got.StreamID || last.Source != "w-owner" {
				t.Errorf("last s-org event = %q by %q, want w-owner's retry_delivery", last.Message.Subject, last.Source)
			}
			// Idempotent: a second retry finds it pending and sends nothing twice.
			if _, err := r.st.RetryDelivery(ctx, "w-owner", id); !errors.Is(err, domain.ErrConflict) {
				t.Errorf("second retry = %v, want ErrConflict", err)
			}
		})
	}
}

// TestRetryFailedDeliveries: a stream's failed deliveries, oldest first
// and at most limit of them, go back to pending; the others stay as they
// are, and a stream with none failed retries nothing.
func TestRetryFailedDeliveries(t *testing.T) {
	t.Parallel()
	r := newRetryRig(t)
	ctx := t.Context()
	f1 := r.deliver(t, "s-hook", domain.DeliveryFailed)
	ok := r.deliver(t, "s-hook", domain.DeliveryDelivered)
	f2 := r.deliver(t, "s-hook", domain.DeliveryPending, domain.DeliveryFailed)
	other := r.deliver(t, "s-gone", domain.DeliveryFailed)
	ids := func(ds []domain.Delivery) []int64 {
		out := []int64{}
		for _, d := range ds {
			out = append(out, d.ID)
		}
		return out
	}
	for _, step := range []struct {
		limit int
		want  []int64
	}{{1, []int64{f1}}, {0, []int64{f2}}, {0, []int64{}}} {
		got, err := r.st.RetryFailedDeliveries(ctx, "w-owner", "s-hook", step.limit)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(step.want, ids(got)); diff != "" {
			t.Errorf("limit %d: retried (-want +got):\n%s", step.limit, diff)
		}
	}
	for id, want := range map[int64]domain.DeliveryStatus{f1: domain.DeliveryPending, f2: domain.DeliveryPending, ok: domain.DeliveryDelivered, other: domain.DeliveryFailed} {
		if d := r.get(t, id); d.Status != want {
			t.Errorf("delivery %d is %s, want %s", id, d.Status, want)
		}
	}
	r.deliver(t, "s-gone", domain.DeliveryDisabled)
	if _, err := r.st.RetryFailedDeliveries(ctx, "w-owner", "s-gone", 0); !errors.Is(err, domain.ErrConflict) {
		t.Errorf("retry on a disabled endpoint = %v, want ErrConflict", err)
	}
}
