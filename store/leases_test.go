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

// claimOne seeds an AI worker with one event and claims a run of it.
func claimOne(t *testing.T, st *store.Store, id string) domain.Activation {
	t.Helper()
	ctx := t.Context()
	seed(t, st)
	st.HireWorker(ctx, "w-owner", domain.Worker{ID: "w-ai", Kind: domain.WorkerAI, PositionID: "p-a", Name: "ai"}, nil)
	st.Subscribe(ctx, "w-owner", "s-a", "w-ai")
	st.Append(ctx, domain.Event{StreamID: "s-a", Message: domain.Message{Body: "one"}}, store.AppendOptions{})
	act, _, _, err := st.Claim(ctx, "w-ai", id, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	return act
}

func exitLog() domain.Event {
	return domain.Event{StreamID: domain.ActivationStreamPrefix + "w-ai", Message: domain.Message{Body: "exit"}}
}

// TestActivationEndsOnce: whichever records an end first — the run, the
// reaper, a cancel — wins; later ends change nothing and say so only when
// the caller must know (EndActivation, RenewLease).
func TestActivationEndsOnce(t *testing.T) {
	t.Parallel()
	clock := storetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	st := storetest.NewWithClock(t, clock.Now)
	ctx := t.Context()
	act := claimOne(t, st, "a-1")
	if ok, err := st.RenewLease(ctx, act.ID, 30*time.Second); !ok || err != nil {
		t.Fatalf("renew a running lease = %v, %v", ok, err)
	}
	clock.Advance(31 * time.Second)
	if lapsed, err := st.LapsedActivations(ctx); err != nil || len(lapsed) != 1 || lapsed[0].ID != act.ID {
		t.Fatalf("lapsed = %+v, %v", lapsed, err)
	}
	ended, err := st.EndActivation(ctx, act.ID, store.Ending{Status: domain.ActivationFailed, Error: "lease lapsed"}, exitLog())
	if err != nil || ended.Status != domain.ActivationFailed || ended.FinishedAt == nil {
		t.Fatalf("end = %+v, %v", ended, err)
	}
	late := act
	late.Status = domain.ActivationSucceeded
	if err := st.FinishActivation(ctx, late, exitLog()); err != nil {
		t.Errorf("a late FinishActivation = %v, want a no-op", err)
	}
	if _, err := st.EndActivation(ctx, act.ID, store.Ending{Status: domain.ActivationCancelled}); !errors.Is(err, domain.ErrConflict) {
		t.Errorf("ending an ended activation = %v, want a conflict", err)
	}
	if ok, err := st.RenewLease(ctx, act.ID, time.Minute); ok || err != nil {
		t.Errorf("renewing an ended lease = %v, %v; want false", ok, err)
	}
	if got, _ := st.GetActivation(ctx, act.ID); got.Status != domain.ActivationFailed || got.Error != "lease lapsed" {
		t.Errorf("activation = %+v, want the first end kept", got)
	}
	if trigs, _ := st.ListTriggers(ctx, store.TriggerQuery{Worker: "w-ai", Statuses: []domain.TriggerStatus{domain.TriggerPending}}); len(trigs) != 2 {
		t.Errorf("pending triggers = %+v, want the hire and the event back", trigs)
	}
}

func TestRetryActivation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		end     func(t *testing.T, st *store.Store, a domain.Activation)
		wantErr string
		want    int
	}{
		{"a finished run's triggers run again", func(t *testing.T, st *store.Store, a domain.Activation) {
			a.Status = domain.ActivationFailed
			st.FinishActivation(t.Context(), a, exitLog())
		}, "", 2},
		{"dropped by a cancel", func(t *testing.T, st *store.Store, a domain.Activation) {
			st.EndActivation(t.Context(), a.ID, store.Ending{Status: domain.ActivationCancelled, Drop: true})
		}, "", 2},
		{"still running", func(*testing.T, *store.Store, domain.Activation) {}, "is still running; cancel it first", 0},
		{"its triggers already wait to run again", func(t *testing.T, st *store.Store, a domain.Activation) {
			st.EndActivation(t.Context(), a.ID, store.Ending{Status: domain.ActivationCancelled})
		}, "no closed triggers to run again", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := storetest.New(t)
			a := claimOne(t, st, "a-1")
			tt.end(t, st, a)
			got, err := st.RetryActivation(t.Context(), a.ID)
			if tt.wantErr != "" {
				if err == nil || !errors.Is(err, domain.ErrConflict) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("retry = %v, want a conflict saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || len(got) != tt.want || got[0].Status != domain.TriggerPending {
				t.Errorf("retry = %+v, %v; want %d pending", got, err, tt.want)
			}
		})
	}
	if _, err := storetest.New(t).RetryActivation(t.Context(), "a-nope"); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("retry of an unknown activation = %v, want not found", err)
	}
}

// TestAdoptingARun: a run whose agent outlives its server is kept out of
// recovery (running, its triggers claimed, its token live), and its
// lapsed lease is taken by one server only.
func TestAdoptingARun(t *testing.T) {
	t.Parallel()
	clock := storetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	st := storetest.NewWithClock(t, clock.Now)
	ctx := t.Context()
	act := claimOne(t, st, "a-1")
	if ok, err := st.TakeLapsedLease(ctx, act.ID, time.Minute); !ok || err != nil {
		t.Fatalf("take a lease never taken = %v, %v; want true", ok, err)
	}
	if ok, err := st.TakeLapsedLease(ctx, act.ID, time.Minute); ok || err != nil {
		t.Fatalf("take a live lease = %v, %v; want false", ok, err)
	}
	clock.Advance(2 * time.Minute)
	if ok, err := st.TakeLapsedLease(ctx, act.ID, time.Minute); !ok || err != nil {
		t.Fatalf("take a lapsed lease = %v, %v; want true", ok, err)
	}
	if n, err := st.RecoverActivations(ctx, nil, []string{act.ID}); n != 0 || err != nil {
		t.Fatalf("recover, keeping the run = %d, %v; want 0", n, err)
	}
	got, err := st.GetActivation(ctx, act.ID)
	if err != nil || got.Status != domain.ActivationRunning {
		t.Fatalf("the kept run: %s, %v; want running", got.Status, err)
	}
	trigs, err := st.ActivationTriggers(ctx, act.ID)
	if err != nil || len(trigs) != 2 { // the hire and the event
		t.Errorf("the kept run's triggers = %d, %v; want 2", len(trigs), err)
	}
	if n, err := st.PendingTriggers(ctx); n != int64(len(trigs)) || err != nil {
		t.Errorf("triggers pending or running = %d, %v; want the kept run's %d", n, err, len(trigs))
	}
	clock.Advance(2 * time.Minute) // on a shared database, only a lapsed run is recovered
	if n, err := st.RecoverActivations(ctx, []string{act.ID}, nil); n != 1 || err != nil {
		t.Fatalf("recover, keeping nothing = %d, %v; want 1", n, err)
	}
	if ok, err := st.TakeLapsedLease(ctx, act.ID, time.Minute); ok || err != nil {
		t.Errorf("take the lease of an interrupted run = %v, %v; want false", ok, err)
	}
}
