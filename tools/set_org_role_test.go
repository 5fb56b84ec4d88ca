package tools

import (
	"testing"

	"github.com/helixml/helix-org/domain"
)

func TestSetOrgRole(t *testing.T) {
	type out struct {
		Worker string `json:"worker"`
		Role   string `json:"role"`
		Before string `json:"before"`
	}
	runTable(t, "set_org_role", []toolCase[out]{
		{name: "owner makes maya a viewer", args: map[string]any{"worker": "w-maya", "role": "viewer"}, want: out{Worker: "w-maya", Role: "viewer", Before: "member"},
			check: func(t *testing.T, f fixture, _ out) {
				if r, _ := f.env.Store.OrgRole(t.Context(), "w-maya"); r != domain.RoleViewer {
					t.Errorf("role = %s", r)
				}
			}},
		{name: "a member may not", caller: "w-maya", args: map[string]any{"worker": "w-maya", "role": "admin"}, wantErr: []string{"member may not set org roles"}, wantIs: domain.ErrForbidden},
		{name: "AI workers have none", args: map[string]any{"worker": "w-echo", "role": "viewer"}, wantErr: []string{"w-echo is an AI worker"}},
		{name: "unknown role", args: map[string]any{"worker": "w-maya", "role": "boss"}, wantErr: []string{`role: unknown org role "boss"`}},
		{name: "missing worker", args: map[string]any{"role": "viewer"}, wantErr: []string{"worker: is required"}},
	})
}
