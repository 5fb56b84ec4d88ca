package tools

import (
	"testing"

	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/helixml/helix-org/domain"
)

func TestInsightFeedback(t *testing.T) {
	refund := map[string]any{"trigger": "refund", "resolution": "check the date"}
	org := map[string]any{"trigger": "refund", "resolution": "check the date", "scope": "org"}
	voteArgs, voteSetup := seeded(map[string]any{"outcome": "helped", "note": "saved a refund"}, "ids", org)
	ownerArgs, ownerSetup := seeded(map[string]any{"outcome": "failed"}, "ids", org)
	againArgs, againSetup := seeded(map[string]any{"outcome": "failed"}, "ids", org)
	usedArgs, usedSetup := seeded(map[string]any{"outcome": "utilized"}, "ids", refund)
	saysArgs, saysSetup := seeded(map[string]any{"outcome": "helped"}, "ids", refund)
	aiArgs, aiSetup := seeded(map[string]any{"outcome": "failed"}, "ids", org)
	outsideArgs, outsideSetup := seeded(map[string]any{"outcome": "utilized"}, "ids", org)
	badArgs, badSetup := seeded(map[string]any{"outcome": "great"}, "ids", refund)
	hiddenArgs, hiddenSetup := seeded(map[string]any{"outcome": "failed"}, "ids", refund)
	runTable(t, "insight_feedback", []toolCase[insightFeedbackOut]{
		{name: "a person's vote moves its counters", caller: "w-maya", setup: voteSetup, args: voteArgs,
			want: insightFeedbackOut{Insights: []countsOut{{Helped: 1, Effectiveness: 0.8}}},
			check: func(t *testing.T, f fixture, got insightFeedbackOut) {
				h := mustCall[listInsightsOut](t, f.env, "list_insights", map[string]any{"history": got.Insights[0].ID}).Insights
				if len(h) != 1 || len(h[0].Votes) != 1 || h[0].Votes[0].Voter != "w-maya" || h[0].Votes[0].Note != "saved a refund" {
					t.Errorf("history = %+v, want Maya's vote in it", h)
				}
			}},
		{name: "the owner's vote on the org's advice counts twice", setup: ownerSetup, args: ownerArgs,
			want: insightFeedbackOut{Insights: []countsOut{{Failed: 1, Effectiveness: 0.059}}}},
		{name: "seven failed votes from one person move it as much as one", caller: "w-maya",
			setup: func(t *testing.T, f fixture) {
				againSetup(t, f)
				for range 6 {
					mustCall[insightFeedbackOut](t, f.as("w-maya"), "insight_feedback", againArgs)
				}
			}, args: againArgs,
			want: insightFeedbackOut{Insights: []countsOut{{Failed: 1, Effectiveness: 0.2}}}},
		{name: "utilized in a run: used now, credited when the run ends", caller: "w-echo", activation: "a-run", setup: usedSetup, args: usedArgs,
			want: insightFeedbackOut{Insights: []countsOut{{Injected: 1, Utilized: 1, Effectiveness: 0.5}}}},
		{name: "an agent's own say on how advice did is refused", caller: "w-echo", activation: "a-run", setup: saysSetup, args: saysArgs,
			wantErr: []string{`outcome: in a run the valid outcome is "utilized"`}, wantIs: domain.ErrInvalid},
		{name: "an AI worker's vote outside a run is refused", caller: "w-echo", setup: aiSetup, args: aiArgs,
			wantErr: []string{"w-echo is an AI worker; only a person votes on an insight outside a run"}, wantIs: domain.ErrForbidden},
		{name: "utilized outside a run", caller: "w-maya", setup: outsideSetup, args: outsideArgs,
			wantErr: []string{`outcome: "utilized" cites insights for a run's outcome, and this call is in no run`}, wantIs: domain.ErrInvalid},
		{name: "bad outcome", caller: "w-echo", setup: badSetup, args: badArgs,
			wantErr: []string{`outcome: unknown outcome "great" (valid: "utilized", "helped", "failed")`}, wantIs: domain.ErrInvalid},
		{name: "no ids", args: map[string]any{"outcome": "helped"}, wantErr: []string{"ids: name at least one insight"}},
		{name: "unknown insight", args: map[string]any{"ids": []string{"i-nope"}, "outcome": "helped"}, wantErr: []string{`insight "i-nope": not found`}, wantIs: domain.ErrNotFound},
		{name: "an insight you cannot recall", caller: "w-maya", setup: hiddenSetup, args: hiddenArgs,
			wantErr: []string{"is scoped to worker w-echo, which w-maya does not belong to"}, wantIs: domain.ErrForbidden},
	}, cmpopts.IgnoreFields(countsOut{}, "ID"))
}
