package tools

import (
	"slices"
	"testing"
	"time"
)

func TestListGrants(t *testing.T) {
	type grant struct {
		Tool string `json:"tool"`
		Live bool   `json:"live"`
	}
	type out struct {
		Grants []grant `json:"grants"`
	}
	names := Names()
	slices.Sort(names)
	var ownerGrants []grant
	for _, name := range names {
		ownerGrants = append(ownerGrants, grant{Tool: name, Live: true})
	}
	runTable(t, "list_grants", []toolCase[out]{
		{
			name: "your own grants when no worker is given",
			want: out{Grants: ownerGrants},
		},
		{
			name: "an expired grant is listed as not live",
			setup: func(t *testing.T, f fixture) {
				f.grant(t, "w-maya", "read_events")
				mustCall[any](t, f.env, "grant_tool", map[string]any{"worker": "w-maya", "tool": "publish", "expiresIn": "1m"})
				f.clock.Advance(time.Minute)
			},
			args: map[string]any{"worker": "w-maya"},
			want: out{Grants: []grant{{Tool: "publish", Live: false}, {Tool: "read_events", Live: true}}},
		},
		{
			name: "a worker without grants gets an empty list",
			args: map[string]any{"worker": "w-maya"},
			want: out{Grants: []grant{}},
		},
		{
			name:    "unknown worker",
			args:    map[string]any{"worker": "w-nope"},
			wantErr: []string{`worker "w-nope": not found`},
		},
	})
}
