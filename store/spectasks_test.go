package store_test

import (
	"strings"
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

// TestRunEndingWithoutAReport: a builder's run that ends without
// report_item gets its item handed out once more; the second such run
// blocks the item, and with nothing else to do the planner is asked.
func TestRunEndingWithoutAReport(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	seed(t, st)
	ctx := t.Context()
	for _, id := range []string{"w-plan", "w-b1"} {
		if _, err := st.HireWorker(ctx, "w-owner", domain.Worker{ID: id, Kind: domain.WorkerAI, PositionID: "p-a", Name: id}, nil); err != nil {
			t.Fatal(err)
		}
	}
	steps := []func() error{
		func() error {
			_, err := st.CreateSpecTask(ctx, "w-owner", domain.SpecTask{ID: "t-x", Title: "X", Prompt: "x", Planner: "w-plan", Builders: []string{"w-b1"}})
			return err
		},
		func() error {
			_, err := st.SubmitSpec(ctx, "w-plan", "t-x", "d", []domain.TaskItem{{Seq: 1, Title: "one"}}, 0)
			return err
		},
		func() error { _, err := st.ReviewSpec(ctx, "w-owner", "t-x", true, ""); return err },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	item := func() domain.TaskItem {
		view, err := st.GetSpecTask(ctx, "t-x")
		if err != nil {
			t.Fatal(err)
		}
		return view.Items[0]
	}
	for run, want := range []struct {
		state    domain.ItemState
		handouts int
	}{{domain.ItemInProgress, 2}, {domain.ItemBlocked, 2}} {
		if it := item(); it.State != domain.ItemInProgress || it.Worker != "w-b1" {
			t.Fatalf("run %d: item before = %+v, want in progress with w-b1", run, it)
		}
		id := "a-" + string(rune('1'+run))
		a, _, _, err := st.Claim(ctx, "w-b1", id, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		a.Status, a.Error = domain.ActivationFailed, "agent crashed"
		if err := st.FinishActivation(ctx, a, domain.Event{StreamID: domain.ActivationStreamPrefix + "w-b1", CausedBy: id, Message: domain.Message{Body: "exit"}}); err != nil {
			t.Fatal(err)
		}
		if it := item(); it.State != want.state || it.Handouts != want.handouts {
			t.Fatalf("run %d: item after = %+v, want %s after %d handouts", run, it, want.state, want.handouts)
		}
	}
	if it := item(); !strings.Contains(it.Summary, "ended twice without a report") {
		t.Errorf("summary = %q", it.Summary)
	}
	evs, err := st.ReadEvents(ctx, store.EventQuery{StreamIDs: []string{domain.InboxStream("w-plan")}})
	if err != nil || evs[len(evs)-1].Message.Subject != "Spec task t-x: re-plan a blocked item" {
		t.Errorf("planner inbox: %v, last %+v", err, evs[len(evs)-1].Message)
	}
}
