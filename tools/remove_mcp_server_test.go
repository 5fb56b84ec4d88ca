package tools

import (
	"slices"
	"testing"

	"github.com/helixml/helix-org/domain"
)

func TestRemoveMCPServer(t *testing.T) {
	runTable(t, "remove_mcp_server", []toolCase[removeMCPServerOut]{
		{
			name: "its tools and every grant of them go",
			setup: func(t *testing.T, f fixture) {
				withTracker(t, f)
				f.grant(t, "w-echo", "tracker__get_ticket")
			},
			args: map[string]any{"name": "tracker"},
			want: removeMCPServerOut{Removed: "tracker"},
			check: func(t *testing.T, f fixture, _ removeMCPServerOut) {
				for _, w := range []string{"w-echo", domain.OwnerWorker} {
					held, _ := f.env.Store.LiveTools(t.Context(), w)
					if slices.ContainsFunc(held, domain.IsOutsideTool) {
						t.Errorf("%s still holds outside tools: %v", w, held)
					}
				}
				if _, err := f.env.Store.MCPServerAuth(t.Context(), "tracker"); err == nil {
					t.Error("its credential is still stored")
				}
			},
		},
		{name: "not the owner", setup: func(t *testing.T, f fixture) { withTracker(t, f) }, caller: "w-maya",
			args: map[string]any{"name": "tracker"}, wantErr: []string{"remove_mcp_server is the owner's"}, wantIs: domain.ErrForbidden},
		{name: "unknown", args: map[string]any{"name": "nope"}, wantErr: []string{`mcp server "nope": not found`}, wantIs: domain.ErrNotFound},
	})
}
