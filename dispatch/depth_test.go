package dispatch_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/dispatch"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// TestHumanBurstIsNeverThrottled: 50 messages from a person, each run
// before the next arrives, are 50 runs without a wait and nothing parked
// (the old rate guard held the 21st for ten minutes).
func TestHumanBurstIsNeverThrottled(t *testing.T) {
	f := newFixture(t)
	f.hire(t, "w-echo", domain.WorkerAI)
	f.settle(t)
	for i := range 50 {
		f.publish(t, "w-owner", "message "+string(rune('A'+i%26)))
		f.settle(t)
	}
	acts, err := f.st.ListActivations(t.Context(), "w-echo")
	if err != nil {
		t.Fatal(err)
	}
	if len(acts) != 51 {
		t.Errorf("w-echo ran %d activations, want 51 (hire and 50 messages)", len(acts))
	}
	left, err := f.st.ListTriggers(t.Context(), store.TriggerQuery{Statuses: []domain.TriggerStatus{domain.TriggerPending, domain.TriggerParked}})
	if err != nil || len(left) != 0 {
		t.Errorf("triggers left waiting = %+v, %v; want none", left, err)
	}
}

// loopFixture has w-a follow s-start and both w-a and w-b follow s-inbox,
// each answering every run on s-inbox: a loop once the owner speaks.
func loopFixture(t *testing.T) *fixture {
	t.Helper()
	f := newFixture(t)
	ctx := t.Context()
	f.hire(t, "w-a", domain.WorkerAI)
	f.hire(t, "w-b", domain.WorkerAI)
	if _, err := f.st.CreateStream(ctx, "w-owner", domain.Stream{ID: "s-start", Name: "start", Transport: domain.Transport{Kind: domain.TransportLocal}}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.Subscribe(ctx, "w-owner", "s-start", "w-a"); err != nil {
		t.Fatal(err)
	}
	f.settle(t) // the hires
	f.rec.during = func(run domain.Run) {
		_, err := f.st.Append(t.Context(), domain.Event{StreamID: "s-inbox", Source: run.WorkerID, CausedBy: run.ActivationID,
			Message: domain.Message{From: run.WorkerID, Body: "answer from " + run.WorkerID}}, store.AppendOptions{})
		if err != nil {
			t.Error(err)
		}
	}
	f.rec.reset()
	return f
}

func incidents(t *testing.T, st *store.Store) []domain.Event {
	t.Helper()
	evs, err := st.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{domain.InboxStream("w-owner")}})
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func TestDepthStopsAnAILoopWithOneIncident(t *testing.T) {
	f := loopFixture(t)
	ctx := t.Context()
	start, err := f.st.Append(ctx, domain.Event{StreamID: "s-start", Source: "w-owner", Message: domain.Message{Body: "go"}}, store.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f.settle(t)

	// Runs at depth 0 to 8: w-a at even depths, w-b at odd ones; w-b's
	// trigger at depth 9 is parked.
	want := []string{"w-a", "w-b", "w-a", "w-b", "w-a", "w-b", "w-a", "w-b", "w-a"}
	if diff := cmp.Diff(want, f.rec.workers()); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
	parked, err := f.st.ListTriggers(ctx, store.TriggerQuery{Statuses: []domain.TriggerStatus{domain.TriggerParked}})
	if err != nil || len(parked) != 1 || parked[0].WorkerID != "w-b" || parked[0].Depth != 9 || !strings.Contains(parked[0].Reason, "max_depth (8)") {
		t.Fatalf("parked = %+v, %v; want w-b's trigger at depth 9", parked, err)
	}
	inc := incidents(t, f.st)
	if len(inc) != 1 {
		t.Fatalf("owner got %d incidents, want 1: %+v", len(inc), inc)
	}
	var extra struct {
		Workers, Streams []string
		FirstEvent       string
	}
	json.Unmarshal(inc[0].Message.Extra, &extra)
	if diff := cmp.Diff([]string{"w-a", "w-b"}, extra.Workers); diff != "" {
		t.Errorf("incident workers (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"s-start", "s-inbox"}, extra.Streams); diff != "" {
		t.Errorf("incident streams (-want +got):\n%s", diff)
	}
	if extra.FirstEvent != start.ID || inc[0].CausedBy != start.ID || !strings.Contains(inc[0].Message.Body, "triggers release") {
		t.Errorf("incident = %+v, want it to name first event %s and how to release", inc[0], start.ID)
	}
	chain, err := f.st.CausalChain(ctx, lastSeq(t, f.st))
	if err != nil || len(chain) != 10 || chain[0].ID != start.ID || chain[9].Depth != 9 {
		t.Errorf("causal chain = %d events, %v; want 10 from %s to depth 9", len(chain), err, start.ID)
	}
	if log := strings.Join(activationLog(t, f.st, "w-b"), "\n"); !strings.Contains(log, "parked: causal depth") {
		t.Errorf("w-b's activation log lacks the parking:\n%s", log)
	}
}

func lastSeq(t *testing.T, st *store.Store) int64 {
	t.Helper()
	evs, err := st.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{"s-inbox"}})
	if err != nil || len(evs) == 0 {
		t.Fatal(evs, err)
	}
	return evs[len(evs)-1].Seq
}

func TestReleaseAndDropActOnALoopsParkedTriggers(t *testing.T) {
	tests := []struct {
		name          string
		act           func(*testing.T, *store.Store, store.TriggerSelection)
		wantRuns      int
		wantIncidents int
	}{
		{"release counts the chain again from 0", func(t *testing.T, st *store.Store, sel store.TriggerSelection) {
			if _, err := dispatch.ReleaseTriggers(t.Context(), st, sel); err != nil {
				t.Fatal(err)
			}
		}, 9, 2},
		{"drop ends it", func(t *testing.T, st *store.Store, sel store.TriggerSelection) {
			if _, err := dispatch.DropTriggers(t.Context(), st, sel); err != nil {
				t.Fatal(err)
			}
		}, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := loopFixture(t)
			f.st.Append(t.Context(), domain.Event{StreamID: "s-start", Source: "w-owner", Message: domain.Message{Body: "go"}}, store.AppendOptions{})
			f.settle(t)
			f.rec.reset()
			tt.act(t, f.st, store.TriggerSelection{Worker: "w-b"})
			f.settle(t)
			if got := len(f.rec.workers()); got != tt.wantRuns {
				t.Errorf("%d runs after, want %d", got, tt.wantRuns)
			}
			if got := len(incidents(t, f.st)); got != tt.wantIncidents {
				t.Errorf("%d incidents, want %d", got, tt.wantIncidents)
			}
		})
	}
}

// TestMaxDepthBelowOneStillRunsPeople: at max_depth 0 (or below) no AI
// run wakes another, but what people say always runs.
func TestMaxDepthBelowOneStillRunsPeople(t *testing.T) {
	for _, limit := range []string{"0", "-3"} {
		t.Run(limit, func(t *testing.T) {
			f := loopFixture(t)
			f.st.SetSetting(t.Context(), dispatch.MaxDepthSetting, limit)
			f.st.Append(t.Context(), domain.Event{StreamID: "s-start", Source: "w-owner", Message: domain.Message{Body: "go"}}, store.AppendOptions{})
			f.settle(t)
			if diff := cmp.Diff([]string{"w-a"}, f.rec.workers()); diff != "" {
				t.Errorf("runs (-want +got):\n%s", diff)
			}
			if got := len(incidents(t, f.st)); got != 1 {
				t.Errorf("%d incidents, want 1", got)
			}
		})
	}
}
