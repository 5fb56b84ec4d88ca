package store_test

import (
	"errors"
	"testing"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

// TestSteering: a message to a running activation is taken once, by the
// first run that asks, whose label rises by the sender's; a message to an
// ended run is a conflict and stores nothing.
func TestSteering(t *testing.T) {
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
