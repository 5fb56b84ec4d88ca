package tools

import (
	"testing"

	"github.com/helixml/helix-org/domain"
)

func TestCorrectInsight(t *testing.T) {
	refund := map[string]any{"trigger": "refund", "resolution": "check the date", "tags": []string{"money"}}
	fixArgs, fixSetup := seeded(map[string]any{"resolution": "check the date and the amount", "reason": "amounts over 100 need a human"}, "id", refund)
	retireArgs, retireSetup := seeded(map[string]any{"retire": true, "reason": "policy changed"}, "id", refund)
	noReasonArgs, noReasonSetup := seeded(map[string]any{"resolution": "x"}, "id", refund)
	nothingArgs, nothingSetup := seeded(map[string]any{"reason": "r"}, "id", refund)
	strangerArgs, strangerSetup := seeded(map[string]any{"resolution": "x", "reason": "r"}, "id", refund)
	runTable(t, "correct_insight", []toolCase[correctInsightOut]{
		{name: "a new version supersedes the old", caller: "w-echo", setup: fixSetup, args: fixArgs,
			want: correctInsightOut{Insight: insightOut{Version: 2, Trigger: "refund", Resolution: "check the date and the amount", Type: "pattern", Tags: []string{"money"},
				Scope: "worker", Target: "w-echo", StoredBy: "w-echo", Reason: "amounts over 100 need a human", Effectiveness: 0.5, CreatedAt: t0}},
			check: func(t *testing.T, f fixture, got correctInsightOut) {
				hist := mustCall[listInsightsOut](t, f.as("w-echo"), "list_insights", map[string]any{"history": got.Insight.ID}).Insights
				if len(hist) != 2 || hist[0].ID != got.Insight.Supersedes || hist[0].SupersededBy != got.Insight.ID {
					t.Errorf("history = %+v", hist)
				}
				if res := mustCall[recallOut](t, f.as("w-echo"), "recall", map[string]any{"query": "refund check date"}).Results; len(res) != 1 || res[0].ID != got.Insight.ID {
					t.Errorf("recall after correction = %+v", res)
				}
			}},
		{name: "retire", setup: retireSetup, args: retireArgs,
			want: correctInsightOut{Insight: insightOut{Version: 1, Trigger: "refund", Resolution: "check the date", Type: "pattern", Tags: []string{"money"},
				Scope: "worker", Target: "w-echo", StoredBy: "w-echo", Retired: true, Reason: "policy changed", Effectiveness: 0.5, CreatedAt: t0}}},
		{name: "no reason", setup: noReasonSetup, args: noReasonArgs, wantErr: []string{"reason: is required"}, wantIs: domain.ErrInvalid},
		{name: "nothing to change", setup: nothingSetup, args: nothingArgs, wantErr: []string{"resolution: give trigger, resolution, type or tags to change, or retire"}},
		{name: "bad type", args: map[string]any{"id": "i-x", "type": "tip", "reason": "r"}, wantErr: []string{`type: unknown insight type "tip"`}},
		{name: "unknown insight", args: map[string]any{"id": "i-nope", "resolution": "x", "reason": "r"}, wantErr: []string{`insight "i-nope": not found`}, wantIs: domain.ErrNotFound},
		{name: "not its author or above it", caller: "w-maya", setup: strangerSetup, args: strangerArgs,
			wantErr: []string{"was stored by w-echo; only its author, a worker above it or w-owner may correct it"}, wantIs: domain.ErrForbidden},
	}, ignoreInsightIDs)
}
