package tools

import (
	"testing"

	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/helixml/helix-org/dispatch"
	"github.com/helixml/helix-org/domain"
)

func TestRecall(t *testing.T) {
	runTable(t, "recall", []toolCase[recallOut]{
		{
			name:   "score and its parts (hybrid by default); another role's insight stays hidden",
			caller: "w-echo",
			setup: func(t *testing.T, f fixture) {
				withLead(t, f)
				withInsight(t, f, "w-owner", map[string]any{"trigger": "auth tests fail", "resolution": "start the auth mock", "scope": "role", "target": "r-support"})
				withInsight(t, f, "w-owner", map[string]any{"trigger": "auth tests fail", "resolution": "desk only", "scope": "role", "target": "r-desk"})
			},
			args: map[string]any{"query": "why do the auth tests fail"},
			want: recallOut{Results: []recalledOut{{Trigger: "auth tests fail", Resolution: "start the auth mock", Type: "pattern",
				Score: 0.452, Relevance: 0.904, Effectiveness: 0.5, Recency: 1, Use: "context"}}},
		},
		{
			name:   "memory.hybrid false: relevance is BM25 alone",
			caller: "w-echo",
			setup: func(t *testing.T, f fixture) {
				withLead(t, f)
				withInsight(t, f, "w-owner", map[string]any{"trigger": "auth tests fail", "resolution": "start the auth mock", "scope": "role", "target": "r-support"})
				if err := f.env.Store.SetSetting(t.Context(), dispatch.HybridSetting, "false"); err != nil {
					t.Fatal(err)
				}
			},
			args: map[string]any{"query": "why do the auth tests fail"},
			want: recallOut{Results: []recalledOut{{Trigger: "auth tests fail", Resolution: "start the auth mock", Type: "pattern",
				Score: 0.5, Relevance: 1, Effectiveness: 0.5, Recency: 1, Use: "context"}}},
		},
		{name: "no words", args: map[string]any{"query": "the"}, wantErr: []string{`query: has no words to search for`}, wantIs: domain.ErrInvalid},
		{name: "negative limit", args: map[string]any{"query": "deploy", "limit": -1}, wantErr: []string{"limit: from 1 to 50 (default 5); got -1"}},
		{name: "limit too high", args: map[string]any{"query": "deploy", "limit": 500}, wantErr: []string{"limit: from 1 to 50 (default 5); got 500"}},
	}, cmpopts.IgnoreFields(recalledOut{}, "ID"))
}

// TestRecallFollow: follow brings in a linked insight the query does not
// match, marked with the link it came by.
func TestRecallFollow(t *testing.T) {
	f := newFixture(t)
	a := withInsight(t, f, "w-echo", map[string]any{"trigger": "deploy friday", "resolution": "don't"})
	b := withInsight(t, f, "w-echo", map[string]any{"trigger": "release freeze", "resolution": "ask the lead"})
	mustCall[linkInsightsOut](t, f.as("w-echo"), "link_insights", map[string]any{"from": a.ID, "to": b.ID, "kind": "similar"})
	got := mustCall[recallOut](t, f.as("w-echo"), "recall", map[string]any{"query": "deploy", "follow": true})
	if len(got.Results) != 2 || got.Results[0].ID != a.ID || got.Results[1].ID != b.ID || got.Results[1].Via != a.ID || got.Results[1].ViaKind != "similar" {
		t.Errorf("results = %+v", got.Results)
	}
}
