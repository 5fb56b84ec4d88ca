package tools

import (
	"testing"

	"github.com/helixml/helix-org/domain"
)

func TestRevokeTool(t *testing.T) {
	type out struct {
		Worker  string `json:"worker"`
		Tool    string `json:"tool"`
		Revoked bool   `json:"revoked"`
	}
	mayaPublishes := func(t *testing.T, f fixture) { f.grant(t, "w-maya", "publish", "read_events") }
	runTable(t, "revoke_tool", []toolCase[out]{
		{
			name:  "revoked grant is gone, others stay",
			setup: mayaPublishes,
			args:  map[string]any{"worker": "w-maya", "tool": "publish"},
			want:  out{Worker: "w-maya", Tool: "publish", Revoked: true},
			check: func(t *testing.T, f fixture, _ out) {
				assertLiveTools(t, f, "w-maya", "read_events")
				c := lastOrgChange(t, f.env.Store)
				before, _ := c.Before.(map[string]any)
				if c.Action != "revoke_tool" || c.Target != "w-maya" || before["tool"] != "publish" {
					t.Errorf("s-org change = %+v, want revoke_tool of publish from w-maya", c)
				}
			},
		},
		{
			name:    "no such grant",
			args:    map[string]any{"worker": "w-maya", "tool": "publish"},
			wantErr: []string{`worker "w-maya" holds no grant for "publish"`},
			wantIs:  domain.ErrNotFound,
		},
		{
			name:    "missing worker",
			setup:   mayaPublishes,
			args:    map[string]any{"tool": "publish"},
			wantErr: []string{"worker: is required"},
		},
		{
			name:    "missing tool",
			setup:   mayaPublishes,
			args:    map[string]any{"worker": "w-maya"},
			wantErr: []string{"tool: is required"},
		},
	})
}
