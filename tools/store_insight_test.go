package tools

import (
	"testing"

	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/helixml/helix-org/domain"
)

// ignoreInsightIDs: insight ids are random; tables compare the rest and
// checks compare ids against each other.
var ignoreInsightIDs = cmpopts.IgnoreFields(insightOut{}, "ID", "Supersedes", "SupersededBy")

// withInsight stores an insight as caller and returns it.
func withInsight(t *testing.T, f fixture, caller string, args map[string]any) insightOut {
	t.Helper()
	if args["type"] == nil {
		args["type"] = "pattern"
	}
	return mustCall[storeInsightOut](t, f.as(caller), "store_insight", args).Insight
}

func TestStoreInsight(t *testing.T) {
	runTable(t, "store_insight", []toolCase[storeInsightOut]{
		{
			name:   "defaults to the caller's own scope",
			caller: "w-echo",
			args:   map[string]any{"trigger": "customer asks for a refund", "resolution": "check the order date first", "type": "pattern", "tags": []string{"refunds"}},
			want: storeInsightOut{Insight: insightOut{Version: 1, Trigger: "customer asks for a refund", Resolution: "check the order date first", Type: "pattern",
				Tags: []string{"refunds"}, Scope: "worker", Target: "w-echo", StoredBy: "w-echo", Effectiveness: 0.5, CreatedAt: t0}},
		},
		{
			name:       "in a run, led_to from what the run recalled",
			caller:     "w-echo",
			activation: "a-run",
			setup: func(t *testing.T, f fixture) {
				withInsight(t, f, "w-owner", map[string]any{"trigger": "refund over 100", "resolution": "ask a human", "scope": "org"})
				run := *f.as("w-echo")
				run.ActivationID = "a-run"
				mustCall[recallOut](t, &run, "recall", map[string]any{"query": "refund"})
			},
			args: map[string]any{"trigger": "refund of 150", "resolution": "asked Maya; she approved", "type": "fact", "scope": "org"},
			want: storeInsightOut{Insight: insightOut{Version: 1, Trigger: "refund of 150", Resolution: "asked Maya; she approved", Type: "fact",
				Scope: "org", StoredBy: "w-echo", Activation: "a-run", Effectiveness: 0.5, CreatedAt: t0}},
			check: func(t *testing.T, f fixture, got storeInsightOut) {
				links, _ := f.env.Store.InsightLinks(t.Context(), got.Insight.ID)
				if len(links) != 1 || links[0].Kind != domain.LinkLedTo || links[0].To != got.Insight.ID {
					t.Errorf("links = %+v, want one led_to", links)
				}
			},
		},
		{name: "bad type", args: map[string]any{"trigger": "x", "resolution": "y", "type": "tip"},
			wantErr: []string{`type: unknown insight type "tip" (valid: "pattern", "failure", "preference", "fact")`}, wantIs: domain.ErrInvalid},
		{name: "bad scope", args: map[string]any{"trigger": "x", "resolution": "y", "type": "fact", "scope": "team"},
			wantErr: []string{`scope: unknown insight scope "team" (valid: "org", "role", "position", "worker")`}},
		{name: "missing resolution", args: map[string]any{"trigger": "x", "type": "fact"}, wantErr: []string{"resolution: is required"}},
		{name: "role scope needs a role", args: map[string]any{"trigger": "x", "resolution": "y", "type": "fact", "scope": "role", "target": "p-support"},
			wantErr: []string{`target: a role insight needs the role's id (r-…) as target; got "p-support"`}},
		{name: "unknown position", args: map[string]any{"trigger": "x", "resolution": "y", "type": "fact", "scope": "position", "target": "p-nope"},
			wantErr: []string{`position "p-nope": not found`}, wantIs: domain.ErrNotFound},
		{name: "not a scope you belong to or manage", caller: "w-echo", setup: func(t *testing.T, f fixture) { withLead(t, f) },
			args:    map[string]any{"trigger": "x", "resolution": "y", "type": "fact", "scope": "position", "target": "p-lead"},
			wantErr: []string{"w-echo may store insights only for its own position or those below it"}, wantIs: domain.ErrForbidden},
	}, ignoreInsightIDs)
}

// seeded returns args and a setup that stores the insight seed describes
// (as w-echo) and writes its id into args[field] (a one-id list for ids),
// since ids are random and a table's args are written before the setup.
func seeded(args map[string]any, field string, seed map[string]any) (map[string]any, func(t *testing.T, f fixture)) {
	return args, func(t *testing.T, f fixture) {
		s := map[string]any{}
		for k, v := range seed {
			s[k] = v
		}
		id := withInsight(t, f, "w-echo", s).ID
		if field == "ids" {
			args[field] = []string{id}
		} else {
			args[field] = id
		}
	}
}
