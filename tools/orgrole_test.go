package tools

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/helixml/helix-org/domain"
)

// TestOrgRoleGate: Call, the one path of every tool call, asks the
// caller's org role after its grants: a viewer changes nothing, a member
// does not run the org, an admin does, an AI worker is not limited by it.
func TestOrgRoleGate(t *testing.T) {
	tests := []struct {
		name    string
		worker  string
		role    domain.OrgRole
		tool    string
		args    string
		wantErr string
	}{
		{name: "viewer reads", worker: "w-maya", role: domain.RoleViewer, tool: "list_workers", args: `{}`},
		{name: "viewer may not publish", worker: "w-maya", role: domain.RoleViewer, tool: "publish", args: `{"stream":"s-inbox","body":"hi"}`,
			wantErr: "viewer may not call publish"},
		{name: "member publishes", worker: "w-maya", role: domain.RoleMember, tool: "publish", args: `{"stream":"s-inbox","body":"hi"}`},
		{name: "member may not set budgets", worker: "w-maya", role: domain.RoleMember, tool: "set_budget", args: `{"scope":"org","limit":1}`,
			wantErr: "member may not call set_budget: it is an admin's"},
		{name: "admin lists invitations", worker: "w-maya", role: domain.RoleAdmin, tool: "list_invitations", args: `{}`},
		{name: "an AI worker has no org role", worker: "w-echo", tool: "publish", args: `{"stream":"s-inbox","body":"hi"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			if tt.role != "" && tt.role != domain.RoleMember {
				must(t)(f.env.Store.SetOrgRole(t.Context(), "w-owner", tt.worker, tt.role))
			}
			f.grant(t, tt.worker, tt.tool)
			must(t)(f.env.Store.Subscribe(t.Context(), "", "s-inbox", tt.worker))
			o := Call(t.Context(), f.as(tt.worker), []string{tt.tool}, tt.tool, json.RawMessage(tt.args))
			if tt.wantErr == "" {
				if o.Err != nil {
					t.Fatalf("%s: %v", tt.tool, o.Err)
				}
				return
			}
			if o.Err == nil || !strings.Contains(o.Err.Error(), tt.wantErr) || !errors.Is(o.Err, domain.ErrForbidden) || o.Status != domain.CallRefused {
				t.Fatalf("%s = %v (%s), want forbidden %q", tt.tool, o.Err, o.Status, tt.wantErr)
			}
		})
	}
}
