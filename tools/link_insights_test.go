package tools

import (
	"testing"

	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/helixml/helix-org/domain"
)

func TestLinkInsights(t *testing.T) {
	var from, to string
	pair := func(t *testing.T, f fixture) {
		from = withInsight(t, f, "w-echo", map[string]any{"trigger": "a", "resolution": "one"}).ID
		to = withInsight(t, f, "w-echo", map[string]any{"trigger": "b", "resolution": "two"}).ID
	}
	args := map[string]any{"kind": "led_to"}
	runTable(t, "link_insights", []toolCase[linkInsightsOut]{
		{name: "led_to by hand", caller: "w-echo", args: args, setup: func(t *testing.T, f fixture) {
			pair(t, f)
			args["from"], args["to"] = from, to
		}, check: func(t *testing.T, _ fixture, got linkInsightsOut) {
			if len(got.Links) != 1 || got.Links[0] != (linkOut{From: from, To: to, Kind: "led_to"}) {
				t.Errorf("links = %+v", got.Links)
			}
		}, want: linkInsightsOut{Links: []linkOut{{Kind: "led_to"}}}},
		{name: "bad kind", args: map[string]any{"from": "i-a", "to": "i-b", "kind": "causes"},
			wantErr: []string{`kind: unknown link kind "causes" (valid: "similar", "led_to")`}, wantIs: domain.ErrInvalid},
		{name: "to itself", args: map[string]any{"from": "i-a", "to": "i-a", "kind": "similar"}, wantErr: []string{"to: an insight cannot link to itself (i-a)"}},
		{name: "unknown insight", args: map[string]any{"from": "i-a", "to": "i-b", "kind": "similar"}, wantErr: []string{`insight "i-a": not found`}, wantIs: domain.ErrNotFound},
	}, cmpopts.IgnoreFields(linkOut{}, "From", "To"))
}
