package store_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

// TestMemoryHealth: the summary counts what the memory holds by type,
// scope and state, finds the stale, contested, quarantined and sunk
// insights, and reports the feedback the loop gets.
func TestMemoryHealth(t *testing.T) {
	t.Parallel()
	clock := storetest.NewClock(time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC))
	st := storetest.NewWithClock(t, clock.Now)
	ctx := t.Context()
	now := clock.Now()
	old := now.Add(-40 * 24 * time.Hour)
	_, err := st.Import(ctx, func(im *store.Importer) error {
		if err := im.Role(domain.Role{ID: "r-b", Title: "b", Content: "b"}, ""); err != nil {
			return err
		}
		for _, p := range []domain.Position{{ID: "p-lead", RoleID: "r-b", Title: "lead"}, {ID: "p-bot", RoleID: "r-b", Title: "bot", ReportsTo: "p-lead"}} {
			if err := im.Position(p); err != nil {
				return err
			}
		}
		for _, w := range []domain.Worker{{ID: "w-lead", Kind: domain.WorkerHuman, PositionID: "p-lead", Name: "lead"}, {ID: "w-bot", Kind: domain.WorkerAI, PositionID: "p-bot", Name: "bot"}} {
			if err := im.Worker(w); err != nil {
				return err
			}
		}
		for _, in := range []domain.Insight{
			{ID: "i-stale", Trigger: "old advice", Resolution: "r", Type: domain.InsightPattern, Scope: domain.ScopeOrg, CreatedAt: old},
			{ID: "i-contested", Trigger: "argued advice", Resolution: "r", Type: domain.InsightPattern, Scope: domain.ScopeOrg, CreatedAt: now,
				Stats: domain.InsightStats{Helped: 2, Failed: 2, CreditHelped: 2, CreditFailed: 2}},
			{ID: "i-sunk", Trigger: "bad advice", Resolution: "r", Type: domain.InsightFact, Scope: domain.ScopeRole, Target: "r-b", CreatedAt: now,
				Stats: domain.InsightStats{Failed: 4, CreditFailed: 4}},
			{ID: "i-quarantined", Trigger: "from a web page", Resolution: "r", Type: domain.InsightFact, Scope: domain.ScopeOrg, CreatedAt: now, Label: domain.Untrusted("a web page")},
			{ID: "i-old", Trigger: "was wrong", Resolution: "r", Type: domain.InsightPattern, Scope: domain.ScopeOrg, CreatedAt: now, SupersededBy: "i-new"},
			{ID: "i-new", Version: 2, Supersedes: "i-old", Trigger: "is right", Resolution: "r", Type: domain.InsightPattern, Scope: domain.ScopeOrg, CreatedAt: now},
			{ID: "i-retired", Trigger: "gone", Resolution: "r", Type: domain.InsightFailure, Scope: domain.ScopeOrg, CreatedAt: now, Retired: true},
		} {
			if in.Version == 0 {
				in.Version = 1
			}
			if err := im.Insight(in); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Two runs are shown advice and one cites it (neither has ended); a
	// person votes.
	recallIDs(t, st, "w-bot", store.RecallQuery{Query: "advice", Activation: "a-quiet"})
	recallIDs(t, st, "w-bot", store.RecallQuery{Query: "argued advice", Activation: "a-cites"})
	if err := st.InsightFeedback(ctx, "w-bot", "a-cites", []string{"i-contested"}, domain.OutcomeUtilized, ""); err != nil {
		t.Fatal(err)
	}
	if err := st.InsightFeedback(ctx, "w-lead", "", []string{"i-new"}, domain.OutcomeHelped, ""); err != nil {
		t.Fatal(err)
	}
	got, err := st.MemoryHealth(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := domain.MemoryHealth{Current: 5,
		ByType:  map[domain.InsightType]int{domain.InsightPattern: 3, domain.InsightFact: 2},
		ByScope: map[domain.InsightScope]int{domain.ScopeOrg: 4, domain.ScopeRole: 1},
		ByState: map[string]int{"current": 5, "superseded": 1, "retired": 1},
		Stale:   1, Contested: 1, Quarantined: 1, Sunk: 1,
		Feedback: domain.MemoryFeedback{RunsShown: 2, RunsCiting: 1, CiteRate: 0.5, Outcomes: []domain.OutcomeCount{},
			Votes: 1, Voters: 1}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("memory health (-want +got):\n%s", diff)
	}
}
