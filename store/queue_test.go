package store_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

// TestRequeueHoldsTheWorkerUntilDue: triggers handed back after a failed
// start keep their worker out of WorkersWithPending and Claim until due,
// newer triggers included; parked ones stay out for good.
func TestRequeueHoldsTheWorkerUntilDue(t *testing.T) {
	t.Parallel()
	clock := storetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	st := storetest.NewWithClock(t, clock.Now)
	seed(t, st)
	ctx := t.Context()
	st.HireWorker(ctx, "w-owner", domain.Worker{ID: "w-ai", Kind: domain.WorkerAI, PositionID: "p-a", Name: "ai"}, nil)
	st.Subscribe(ctx, "w-owner", "s-a", "w-ai")
	st.Append(ctx, domain.Event{StreamID: "s-a", Message: domain.Message{Body: "one"}}, store.AppendOptions{})
	act, trigs, _, err := st.Claim(ctx, "w-ai", "a-1", time.Minute)
	if err != nil || len(trigs) != 2 {
		t.Fatalf("claim = %v, %v", trigs, err)
	}
	act.Status, act.Error = domain.ActivationFailed, "did not start: no binary"
	exit := domain.Event{StreamID: domain.ActivationStreamPrefix + "w-ai", Message: domain.Message{Body: "exit"}}
	rq := store.Requeue{Error: "no binary", NotBefore: clock.Now().Add(time.Minute), Park: []int64{trigs[0].ID}, ParkReason: "gave up"}
	if err := st.RequeueActivation(ctx, act, rq, exit); err != nil {
		t.Fatal(err)
	}
	st.Append(ctx, domain.Event{StreamID: "s-a", Message: domain.Message{Body: "two"}}, store.AppendOptions{})

	due := func() bool {
		ws, err := st.WorkersWithPending(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return slices.Contains(ws, "w-ai")
	}
	if due() {
		t.Error("a worker backing off is listed as due")
	}
	if _, _, _, err := st.Claim(ctx, "w-ai", "a-early", time.Minute); !errors.Is(err, domain.ErrNotFound) || !strings.Contains(err.Error(), "back off until") {
		t.Errorf("early claim: %v, want not due", err)
	}
	clock.Advance(time.Minute)
	if !due() {
		t.Error("the worker is not due once its backoff ended")
	}
	_, again, _, err := st.Claim(ctx, "w-ai", "a-2", time.Minute)
	if err != nil || len(again) != 2 || again[0].Attempts != 1 || again[0].Event.Message.Body != "one" || again[1].Attempts != 0 {
		t.Errorf("claim when due = %+v, %v; want the retried event (1 attempt) and the new one, not the parked hire", again, err)
	}
	got, _ := st.ListTriggers(ctx, store.TriggerQuery{Statuses: []domain.TriggerStatus{domain.TriggerParked}})
	if len(got) != 1 || got[0].Kind != domain.TriggerHire || got[0].Reason != "gave up" || got[0].LastError != "no binary" || got[0].Attempts != 1 {
		t.Errorf("parked = %+v", got)
	}
	if a, _ := st.GetActivation(ctx, "a-1"); a.Status != domain.ActivationFailed || a.FinishedAt == nil {
		t.Errorf("the failed start's activation = %+v, want failed and finished", a)
	}
}

// TestReleaseAndDropTakeOnlyWaitingTriggers pins the operator commands'
// refusals: all or nothing, with the reason named.
func TestReleaseAndDropTakeOnlyWaitingTriggers(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	seed(t, st)
	ctx := t.Context()
	st.HireWorker(ctx, "w-owner", domain.Worker{ID: "w-ai", Kind: domain.WorkerAI, PositionID: "p-a", Name: "ai"}, nil)
	st.HireWorker(ctx, "w-owner", domain.Worker{ID: "w-bi", Kind: domain.WorkerAI, PositionID: "p-a", Name: "bi"}, nil)
	if _, _, _, err := st.Claim(ctx, "w-bi", "a-running", time.Minute); err != nil { // trigger 2 is claimed
		t.Fatal(err)
	}
	tests := []struct {
		name string
		sel  store.TriggerSelection
		want error
		text string
	}{
		{"unknown id", store.TriggerSelection{IDs: []int64{1, 99}}, domain.ErrNotFound, `trigger "99"`},
		{"running trigger", store.TriggerSelection{IDs: []int64{1, 2}}, domain.ErrConflict, "trigger 2 is claimed, not pending or parked"},
		{"unknown worker", store.TriggerSelection{Worker: "w-nobody"}, domain.ErrNotFound, `worker "w-nobody"`},
		{"nothing named", store.TriggerSelection{}, domain.ErrInvalid, "name at least one trigger id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errRelease := st.ReleaseTriggers(ctx, tt.sel)
			_, errDrop := st.DropTriggers(ctx, tt.sel, "x")
			for _, err := range []error{errRelease, errDrop} {
				if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.text) {
					t.Errorf("err = %v, want %v naming %q", err, tt.want, tt.text)
				}
			}
		})
	}
	if got, _ := st.ListTriggers(ctx, store.TriggerQuery{Worker: "w-ai"}); len(got) != 1 || got[0].Status != domain.TriggerPending {
		t.Errorf("trigger 1 after refused calls = %+v, want untouched", got)
	}
	dropped, err := st.DropTriggers(ctx, store.TriggerSelection{Worker: "w-ai"}, "not wanted")
	if err != nil || len(dropped) != 1 || dropped[0].Status != domain.TriggerDropped || dropped[0].Reason != "not wanted" {
		t.Errorf("drop by worker = %+v, %v", dropped, err)
	}
	if again, err := st.DropTriggers(ctx, store.TriggerSelection{Worker: "w-ai"}, "x"); err != nil || len(again) != 0 {
		t.Errorf("dropping again = %+v, %v; want nothing left to drop", again, err)
	}
}
