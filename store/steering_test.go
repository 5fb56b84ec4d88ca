package store_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

// TestSteering: a message to a running activation is taken once, by the
// first run that asks, whose label rises by the sender's; a message to an
// ended run is a conflict and stores nothing.
func TestSteering(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := t.Context()
	act := claimOne(t, st, "a-1")
	sender := store.Writing(ctx, domain.Untrusted(`webhook event e-9 on s-hook from "mallory"`))
	sent, err := st.SteerActivation(sender, act.ID, "w-owner", "stop and summarise")
	if err != nil {
		t.Fatal(err)
	}
	if sent.WorkerID != "w-ai" || sent.ActivationID != "a-1" || sent.From != "w-owner" || !sent.Label.Untrusted {
		t.Errorf("sent = %+v", sent)
	}
	if other, err := st.TakeSteering(ctx, "w-owner", "a-owner"); err != nil || len(other) > 0 {
		t.Errorf("another worker took %+v, %v; want nothing", other, err)
	}
	got, err := st.TakeSteering(ctx, "w-ai", act.ID)
	if err != nil || len(got) != 1 || got[0].Body != "stop and summarise" || got[0].TakenBy != "a-1" {
		t.Fatalf("take = %+v, %v", got, err)
	}
	if again, err := st.TakeSteering(ctx, "w-ai", act.ID); err != nil || len(again) != 0 {
		t.Errorf("second take = %+v, %v; want nothing", again, err)
	}
	if l, err := st.ActivationLabel(ctx, act.ID); err != nil || !l.Untrusted {
		t.Errorf("label after taking an untrusted message = %+v, %v; want untrusted", l, err)
	}
	if _, err := st.EndActivation(ctx, act.ID, store.Ending{Status: domain.ActivationCancelled}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.SteerActivation(ctx, act.ID, "w-owner", "too late"); !errors.Is(err, domain.ErrConflict) {
		t.Errorf("steer an ended run = %v, want a conflict", err)
	}
	if _, err := st.SteerActivation(ctx, "a-nope", "w-owner", "x"); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("steer an unknown run = %v, want not found", err)
	}
}

// TestSteeringIsNeverLost: messages a run took go back when its agent did
// not start (its triggers run again), and the next run takes them; a run
// that ends without reading messages sent to it leaves a notice in its
// worker's inbox, which wakes the worker, and the messages wait for that
// run.
func TestSteeringIsNeverLost(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := t.Context()
	act := claimOne(t, st, "a-1")
	if _, err := st.SteerActivation(ctx, act.ID, "w-owner", "include the totals"); err != nil {
		t.Fatal(err)
	}
	if got, err := st.TakeSteering(ctx, "w-ai", act.ID); err != nil || len(got) != 1 {
		t.Fatalf("take = %+v, %v", got, err)
	}
	act.Status, act.Error = domain.ActivationFailed, "did not start"
	if err := st.RequeueActivation(ctx, act, store.Requeue{Error: "no model", NotBefore: st.Now()}); err != nil {
		t.Fatal(err)
	}
	next, _, _, err := st.Claim(ctx, "w-ai", "a-2", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := st.TakeSteering(ctx, "w-ai", next.ID); err != nil || len(got) != 1 || got[0].Body != "include the totals" {
		t.Fatalf("the next run took %+v, %v; want the message the failed start took", got, err)
	}

	if _, err := st.SteerActivation(ctx, next.ID, "w-owner", "and the averages"); err != nil {
		t.Fatal(err)
	}
	if err := st.FinishActivation(ctx, domain.Activation{ID: next.ID, Status: domain.ActivationSucceeded}, exitLog()); err != nil {
		t.Fatal(err)
	}
	inbox, err := st.ReadEvents(ctx, store.EventQuery{StreamIDs: []string{domain.InboxStream("w-ai")}})
	if err != nil || len(inbox) != 1 || !strings.Contains(inbox[0].Message.Body, "1 message(s) sent to your run a-2") {
		t.Fatalf("w-ai's inbox = %+v, %v; want the notice that wakes it", inbox, err)
	}
	third, _, _, err := st.Claim(ctx, "w-ai", "a-3", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := st.TakeSteering(ctx, "w-ai", third.ID); err != nil || len(got) != 1 || got[0].Body != "and the averages" {
		t.Errorf("the woken run took %+v, %v; want the unread message", got, err)
	}
}
