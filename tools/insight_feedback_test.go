package tools

import (
	"testing"

	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/helixml/helix-org/domain"
)

func TestInsightFeedback(t *testing.T) {
	refund := map[string]any{"trigger": "refund", "resolution": "check the date"}
	helped := countsOut{Helped: 1, Effectiveness: 0.667}
	utilized := countsOut{Injected: 1, Utilized: 1, Effectiveness: 0.5}
	helpedArgs, helpedSetup := seeded(map[string]any{"outcome": "helped"}, "ids", refund)
	usedArgs, usedSetup := seeded(map[string]any{"outcome": "utilized"}, "ids", refund)
	badArgs, badSetup := seeded(map[string]any{"outcome": "great"}, "ids", refund)
	hiddenArgs, hiddenSetup := seeded(map[string]any{"outcome": "failed"}, "ids", refund)
	runTable(t, "insight_feedback", []toolCase[insightFeedbackOut]{
		{name: "helped moves its counters", caller: "w-echo", setup: helpedSetup, args: helpedArgs, want: insightFeedbackOut{Insights: []countsOut{helped}}},
		{name: "utilized in a run: used now, credited when the run ends", caller: "w-echo", activation: "a-run", setup: usedSetup, args: usedArgs,
			want: insightFeedbackOut{Insights: []countsOut{utilized}}},
		{name: "bad outcome", caller: "w-echo", setup: badSetup, args: badArgs,
			wantErr: []string{`outcome: unknown outcome "great" (valid: "utilized", "helped", "failed")`}, wantIs: domain.ErrInvalid},
		{name: "no ids", args: map[string]any{"outcome": "helped"}, wantErr: []string{"ids: name at least one insight"}},
		{name: "unknown insight", args: map[string]any{"ids": []string{"i-nope"}, "outcome": "helped"}, wantErr: []string{`insight "i-nope": not found`}, wantIs: domain.ErrNotFound},
		{name: "an insight you cannot recall", caller: "w-maya", setup: hiddenSetup, args: hiddenArgs,
			wantErr: []string{"is scoped to worker w-echo, which w-maya does not belong to"}, wantIs: domain.ErrForbidden},
	}, cmpopts.IgnoreFields(countsOut{}, "ID"))
}
