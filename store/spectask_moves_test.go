package store_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

// TestItemMovesOnTheTaskStream: every move of an item — handed out,
// claimed, reported, taken back from a run that ended without a report,
// added by a re-plan — is told on the task's stream in the transaction
// that made it, so a watcher of the stream sees the board change.
func TestItemMovesOnTheTaskStream(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	seed(t, st)
	ctx := t.Context()
	for _, id := range []string{"w-plan", "w-b1", "w-b2"} {
		if _, err := st.HireWorker(ctx, "w-owner", domain.Worker{ID: id, Kind: domain.WorkerAI, PositionID: "p-a", Name: id}, nil); err != nil {
			t.Fatal(err)
		}
	}
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(st.CreateSpecTask(ctx, "w-owner", domain.SpecTask{ID: "t-x", Title: "X", Prompt: "x", Planner: "w-plan", Builders: []string{"w-b1", "w-b2"}, Parallel: 1}))
	must(st.SubmitSpec(ctx, "w-plan", "t-x", "d", []domain.TaskItem{{Seq: 1, Title: "one"}, {Seq: 2, Title: "two"}, {Seq: 3, Title: "three", BlockedBy: []int{1, 2}}}, 0))
	must(st.ReviewSpec(ctx, "w-owner", "t-x", true, ""))                                                // 1 → w-b1
	must(st.ReportItem(ctx, "w-b1", "t-x", 1, domain.OutcomeDelivered, "done", ""))                     // 1 done; 2 → w-b1
	must(st.ReportItem(ctx, "w-b1", "t-x", 2, domain.OutcomeBlocked, "no access", ""))                  // 2 blocked; the planner re-plans
	must(st.SubmitSpec(ctx, "w-plan", "t-x", "d", []domain.TaskItem{{Seq: 1, Title: "two, again"}}, 2)) // 4 added, → w-b1
	a, _, _, err := st.Claim(ctx, "w-b1", "a-1", time.Hour)
	must(a, err)
	a.Status = domain.ActivationFailed
	must(nil, st.FinishActivation(ctx, a, domain.Event{StreamID: domain.ActivationStreamPrefix + "w-b1", CausedBy: "a-1", Message: domain.Message{Body: "exit"}}))
	// 4 went back to pending and was handed out again at once.

	evs, err := st.ReadEvents(ctx, store.EventQuery{StreamIDs: []string{domain.TaskStream("t-x")}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ev := range evs {
		var m struct {
			Item   int
			State  string
			Worker string
		}
		json.Unmarshal(ev.Message.Extra, &m)
		if m.Item > 0 {
			got = append(got, ev.Message.Subject)
		}
	}
	want := []string{
		"t-x: item 1 in_progress (w-b1)",
		"t-x: item 1 done (w-b1)",
		"t-x: item 2 in_progress (w-b1)",
		"t-x: item 2 blocked (w-b1)",
		"t-x: item 2 stalled",
		"t-x: item 2 replan",
		"t-x: item 4 pending",
		"t-x: item 4 in_progress (w-b1)",
		"t-x: item 4 pending",
		"t-x: item 4 in_progress (w-b1)",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("item moves on s-task-x (-want +got):\n%s", diff)
	}
}
