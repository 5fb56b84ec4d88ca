package store_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// TestInsightRuns: an insight's feedback history lists the runs it was
// shown to, newest first, with what each made of it.
func TestInsightRuns(t *testing.T) {
	st, clock := insightOrg(t)
	ctx := t.Context()
	in := storeInsight(t, st, "w-owner", domain.Insight{Trigger: "a refund is asked", Resolution: "check the order first"})
	for _, a := range []string{"a-1", "a-2", "a-3"} {
		clock.Advance(time.Minute)
		if err := st.ShowInsights(ctx, a, []string{in.ID}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.InsightFeedback(ctx, "w-owner", "a-2", []string{in.ID}, domain.OutcomeUtilized); err != nil {
		t.Fatal(err)
	}
	if err := st.InsightFeedback(ctx, "w-owner", "a-3", []string{in.ID}, domain.OutcomeFailed); err != nil {
		t.Fatal(err)
	}
	got, err := st.InsightRuns(ctx, in.ID, 2)
	if err != nil {
		t.Fatal(err)
	}
	at := func(m int) time.Time { return time.Date(2026, 3, 4, 10, m, 0, 0, time.UTC) }
	want := []store.InsightRun{{Activation: "a-3", Credited: "failed", At: at(3)}, {Activation: "a-2", Utilized: true, At: at(2)}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
}
