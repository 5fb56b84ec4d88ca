package tools

import (
	"testing"

	"github.com/helixml/helix-org/domain"
)

func TestInsightFeedback(t *testing.T) {
	refund := map[string]any{"trigger": "refund", "resolution": "check the date"}
	base := insightOut{Version: 1, Trigger: "refund", Resolution: "check the date", Type: "pattern", Scope: "worker", Target: "w-echo", StoredBy: "w-echo", CreatedAt: t0}
	helped := base
	helped.Helped, helped.Effectiveness = 1, 0.667
	utilized := base
	utilized.Injected, utilized.Utilized, utilized.Effectiveness, utilized.LastUsed = 1, 1, 0.5, &t0
	helpedArgs, helpedSetup := seeded(map[string]any{"outcome": "helped"}, "ids", refund)
	usedArgs, usedSetup := seeded(map[string]any{"outcome": "utilized"}, "ids", refund)
	badArgs, badSetup := seeded(map[string]any{"outcome": "great"}, "ids", refund)
	hiddenArgs, hiddenSetup := seeded(map[string]any{"outcome": "failed"}, "ids", refund)
	runTable(t, "insight_feedback", []toolCase[insightFeedbackOut]{
		{name: "helped moves its counters", caller: "w-echo", setup: helpedSetup, args: helpedArgs, want: insightFeedbackOut{Insights: []insightOut{helped}}},
		{name: "utilized in a run: used now, credited when the run ends", caller: "w-echo", activation: "a-run", setup: usedSetup, args: usedArgs,
			want: insightFeedbackOut{Insights: []insightOut{utilized}}},
		{name: "bad outcome", caller: "w-echo", setup: badSetup, args: badArgs,
			wantErr: []string{`outcome: unknown outcome "great" (valid: "utilized", "helped", "failed")`}, wantIs: domain.ErrInvalid},
		{name: "no ids", args: map[string]any{"outcome": "helped"}, wantErr: []string{"ids: name at least one insight"}},
		{name: "unknown insight", args: map[string]any{"ids": []string{"i-nope"}, "outcome": "helped"}, wantErr: []string{`insight "i-nope": not found`}, wantIs: domain.ErrNotFound},
		{name: "an insight you cannot recall", caller: "w-maya", setup: hiddenSetup, args: hiddenArgs,
			wantErr: []string{"is scoped to worker w-echo, which w-maya does not belong to"}, wantIs: domain.ErrForbidden},
	}, ignoreInsightIDs)
}
