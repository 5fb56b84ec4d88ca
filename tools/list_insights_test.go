package tools

import (
	"testing"

	"github.com/helixml/helix-org/domain"
)

func TestListInsights(t *testing.T) {
	two := func(t *testing.T, f fixture) {
		withInsight(t, f, "w-echo", map[string]any{"trigger": "mine", "resolution": "echo's own", "type": "fact"})
		withInsight(t, f, "w-owner", map[string]any{"trigger": "everyone's", "resolution": "for all", "scope": "org", "tags": []string{"ops"}})
	}
	mine := insightOut{Version: 1, Trigger: "mine", Resolution: "echo's own", Type: "fact", Scope: "worker", Target: "w-echo", StoredBy: "w-echo", Effectiveness: 0.5, CreatedAt: t0}
	org := insightOut{Version: 1, Trigger: "everyone's", Resolution: "for all", Type: "pattern", Tags: []string{"ops"}, Scope: "org", StoredBy: "w-owner", Effectiveness: 0.5, CreatedAt: t0}
	runTable(t, "list_insights", []toolCase[listInsightsOut]{
		{name: "what the caller may recall, newest first", caller: "w-echo", setup: two, want: listInsightsOut{Insights: []insightOut{org, mine}}},
		{name: "another worker does not see echo's", caller: "w-maya", setup: two, want: listInsightsOut{Insights: []insightOut{org}}},
		{name: "by tag", setup: two, args: map[string]any{"tag": "ops"}, want: listInsightsOut{Insights: []insightOut{org}}},
		{name: "by type", setup: two, args: map[string]any{"type": "fact"}, want: listInsightsOut{Insights: []insightOut{mine}}},
		{name: "bad scope", args: map[string]any{"scope": "team"}, wantErr: []string{`scope: unknown insight scope "team"`}, wantIs: domain.ErrInvalid},
		{name: "bad type", args: map[string]any{"type": "tip"}, wantErr: []string{`type: unknown insight type "tip"`}},
		{name: "history of an unknown insight", args: map[string]any{"history": "i-nope"}, wantErr: []string{`insight "i-nope": not found`}, wantIs: domain.ErrNotFound},
	}, ignoreInsightIDs)
}
