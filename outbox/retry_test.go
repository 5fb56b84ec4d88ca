package outbox_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/outbox"
	"github.com/helixml/helix-org/transports/delivery"
)

// TestRetriedDeliveryHasAFreshBudget: a delivery given up after
// max_attempts and sent again by an operator gets max_attempts more, with
// the backoff starting over, and its log numbers every attempt.
func TestRetriedDeliveryHasAFreshBudget(t *testing.T) {
	r := newRig(t)
	if err := r.st.SetSetting(t.Context(), delivery.MaxAttemptsSetting(kindHook), "2"); err != nil {
		t.Fatal(err)
	}
	down := delivery.Outcome{Err: errors.New("HTTP 503"), Status: 503}
	f := newFake(down, down, down, down, down)
	e := r.engine(f)
	r.publish(t, "s-out", "w-maya", "hello")
	step(t, e)
	r.clock.Advance(time.Second)
	step(t, e)
	d := deliveries(t, r.st)[0]
	if d.Status != domain.DeliveryFailed {
		t.Fatalf("after max_attempts the delivery is %s, want failed", d.Status)
	}
	if _, err := r.st.RetryDelivery(t.Context(), "w-owner", d.ID); err != nil {
		t.Fatal(err)
	}
	step(t, e) // attempt 3, the retry's first: still pending
	if d := deliveries(t, r.st)[0]; d.Status != domain.DeliveryPending || d.NextAttemptAt.Sub(r.clock.Now()) != time.Second {
		t.Fatalf("after the retry's first failure the delivery is %s, next at %v; want pending after the first backoff (1s)", d.Status, d.NextAttemptAt)
	}
	r.clock.Advance(time.Second)
	step(t, e) // attempt 4: the retry's budget is spent
	want := []summary{{"s-out", domain.DeliveryFailed, 4, []int{503, 503, 503, 503}}}
	if diff := cmp.Diff(want, summarise(deliveries(t, r.st))); diff != "" {
		t.Errorf("deliveries (-want +got):\n%s", diff)
	}
	for i, c := range f.sent() {
		if c.Attempt != i+1 {
			t.Errorf("call %d got attempt %d, want the log's numbering to go on", i, c.Attempt)
		}
	}
}

// TestRunSendsARetryAtOnce: the running loop, idle with nothing due,
// sends a retried delivery as soon as the retry commits — not when its
// idle wait of up to a minute runs out.
func TestRunSendsARetryAtOnce(t *testing.T) {
	r := newRig(t)
	f := newFake(delivery.Outcome{Err: errors.New("refused"), Permanent: true})
	e := outbox.New(r.st, []delivery.Sender{f}, outbox.Options{Now: r.clock.Now})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	r.publish(t, "s-out", "w-maya", "hello")
	waitFor(t, f.got)
	d := waitStatus(t, r, domain.DeliveryFailed)
	if _, err := r.st.RetryDelivery(t.Context(), "w-owner", d.ID); err != nil {
		t.Fatal(err)
	}
	waitFor(t, f.got)
	waitStatus(t, r, domain.DeliveryDelivered)
}

// waitStatus waits, on store commits, for the rig's one delivery to
// reach status.
func waitStatus(t *testing.T, r rig, status domain.DeliveryStatus) domain.Delivery {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		changed := r.st.Changed()
		if ds := deliveries(t, r.st); len(ds) == 1 && ds[0].Status == status {
			return ds[0]
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("the delivery is not %s after 10s: %+v", status, deliveries(t, r.st))
		}
	}
}
