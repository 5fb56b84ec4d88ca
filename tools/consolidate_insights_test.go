package tools

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestConsolidateInsights(t *testing.T) {
	runTable(t, "consolidate_insights", []toolCase[consolidateInsightsOut]{
		{
			name: "near-duplicates to merge, a failing one to prune; nothing changes",
			setup: func(t *testing.T, f fixture) {
				withInsight(t, f, "w-owner", map[string]any{"trigger": "payments module blocked builder", "resolution": "ask finance for the sandbox key"})
				f.clock.Advance(time.Minute)
				withInsight(t, f, "w-owner", map[string]any{"trigger": "payments module blocked the builder", "resolution": "ask finance for a sandbox key"})
				bad := withInsight(t, f, "w-owner", map[string]any{"trigger": "flaky tests", "resolution": "rerun them", "scope": "org"})
				// The owner's vote counts twice and Maya's once: three
				// outcomes' worth, from two people.
				for _, person := range []string{"w-owner", "w-maya"} {
					mustCall[insightFeedbackOut](t, f.as(person), "insight_feedback", map[string]any{"ids": []string{bad.ID}, "outcome": "failed"})
				}
			},
			want: consolidateInsightsOut{Proposals: []proposalOut{
				{Kind: "merge", Why: "100% of their terms overlap"},
				{Kind: "prune", Why: "effectiveness 0.03 after 0 helped, 2 failed"},
			}},
			check: func(t *testing.T, f fixture, got consolidateInsightsOut) {
				if n := len(mustCall[listInsightsOut](t, f.env, "list_insights", nil).Insights); n != 3 {
					t.Errorf("%d current insights after consolidate, want all 3", n)
				}
				if len(got.Proposals[0].IDs) != 2 || got.Proposals[0].Accept == "" {
					t.Errorf("merge proposal = %+v", got.Proposals[0])
				}
			},
		},
		{
			name: "unused for a month: dormant",
			setup: func(t *testing.T, f fixture) {
				withInsight(t, f, "w-owner", map[string]any{"trigger": "old", "resolution": "advice"})
				f.clock.Advance(31 * 24 * time.Hour)
			},
			want: consolidateInsightsOut{Proposals: []proposalOut{{Kind: "dormant", Why: "not used for 30 days or more"}}},
		},
		{name: "nothing stored, nothing proposed", want: consolidateInsightsOut{Proposals: []proposalOut{}}},
	}, cmpopts.IgnoreFields(proposalOut{}, "IDs", "Accept"))
}
