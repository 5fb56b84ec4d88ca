package store_test

import (
	"strings"
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

// TestExplorerRunEndingWithoutAReport: an explorer's run that ends
// without report_exploration leaves its whole partition unknown, and the
// planner is woken with what the others found rather than kept waiting.
func TestExplorerRunEndingWithoutAReport(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	seed(t, st)
	ctx := t.Context()
	for _, id := range []string{"w-plan", "w-e1", "w-e2"} {
		if _, err := st.HireWorker(ctx, "w-owner", domain.Worker{ID: id, Kind: domain.WorkerAI, PositionID: "p-a", Name: id}, nil); err != nil {
			t.Fatal(err)
		}
	}
	parts := domain.PartitionRepo([]string{"api/a.go", "api/b.go", "web/index.html"}, []string{"w-e1", "w-e2"}, 10)
	task := domain.SpecTask{ID: "t-x", Title: "X", Prompt: "x", Repo: "/srv/x", Planner: "w-plan", Builders: []string{"w-e1"}, Explorers: []string{"w-e1", "w-e2"}}
	if got, err := st.StartSpecTask(ctx, "w-owner", task, store.TaskStart{Parts: parts}); err != nil || got.State != domain.TaskExploration {
		t.Fatalf("start: %+v, %v; want exploration", got, err)
	}
	if _, err := st.ReportExploration(ctx, "w-e1", "t-x", 1, "api/ is a net/http server", []string{"api"}); err != nil {
		t.Fatal(err)
	}
	a, _, _, err := st.Claim(ctx, "w-e2", "a-1", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	a.Status, a.Error = domain.ActivationFailed, "agent crashed"
	if err := st.FinishActivation(ctx, a, domain.Event{StreamID: domain.ActivationStreamPrefix + "w-e2", CausedBy: "a-1", Message: domain.Message{Body: "exit"}}); err != nil {
		t.Fatal(err)
	}
	view, err := st.GetSpecTask(ctx, "t-x")
	if err != nil {
		t.Fatal(err)
	}
	if p := view.Exploration[1]; view.Task.State != domain.TaskSpecGeneration || p.State != domain.ExploreUnreported || len(p.Unknown) != 1 || p.Unknown[0] != "web" {
		t.Fatalf("task %s, part 2 %+v; want spec_generation with web unknown", view.Task.State, p)
	}
	evs, err := st.ReadEvents(ctx, store.EventQuery{StreamIDs: []string{domain.InboxStream("w-plan")}})
	if err != nil {
		t.Fatal(err)
	}
	body := evs[len(evs)-1].Message.Body
	for _, want := range []string{"Coverage: 1 of 2 areas read. Unknown (not read; plan with care or explore them in an item): web.",
		"### Part 2 (w-e2, 1 files): unreported", "run a-1 ended without a report: failed agent crashed"} {
		if !strings.Contains(body, want) {
			t.Errorf("the planner's notice lacks %q:\n%s", want, body)
		}
	}
}
