package store_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// TestInsightRuns: an insight's feedback history lists the runs it was
// shown to, newest first, with what each made of it: shown only, cited,
// or cited and credited with the run's outcome.
func TestInsightRuns(t *testing.T) {
	t.Parallel()
	st, clock := insightOrg(t)
	ctx := t.Context()
	in := storeInsight(t, st, "w-owner", domain.Insight{Trigger: "a refund is asked", Resolution: "check the order first"})
	for _, a := range []string{"a-1", "a-2"} {
		clock.Advance(time.Minute)
		if err := st.ShowInsights(ctx, a, []string{in.ID}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.InsightFeedback(ctx, "w-bot", "a-2", []string{in.ID}, domain.OutcomeUtilized, ""); err != nil {
		t.Fatal(err)
	}
	// w-bot's hire run shows, cites and fails.
	clock.Advance(time.Minute)
	if _, _, _, err := st.Claim(ctx, "w-bot", "a-3", time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := st.ShowInsights(ctx, "a-3", []string{in.ID}); err != nil {
		t.Fatal(err)
	}
	if err := st.InsightFeedback(ctx, "w-bot", "a-3", []string{in.ID}, domain.OutcomeUtilized, ""); err != nil {
		t.Fatal(err)
	}
	exit := domain.Event{StreamID: domain.ActivationStreamPrefix + "w-bot", CausedBy: "a-3", Message: domain.Message{Subject: "exit", Body: "failed"}}
	if err := st.FinishActivation(ctx, domain.Activation{ID: "a-3", Status: domain.ActivationFailed, Error: "boom"}, exit); err != nil {
		t.Fatal(err)
	}
	got, err := st.InsightRuns(ctx, in.ID, 2)
	if err != nil {
		t.Fatal(err)
	}
	at := func(m int) time.Time { return time.Date(2026, 3, 4, 10, m, 0, 0, time.UTC) }
	want := []store.InsightRun{{Activation: "a-3", Utilized: true, Credited: "failed", At: at(3)}, {Activation: "a-2", Utilized: true, At: at(2)}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
}
