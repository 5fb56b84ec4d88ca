package server_test

import (
	"strings"
	"testing"

	"github.com/helixml/helix-org/server"
	"github.com/helixml/helix-org/server/servertest"
)

// TestOrgRolesOverMCP: a person's org role holds over their own MCP
// endpoint as it does in the web UI — one decision, in the tool call path.
// A viewer reads but may not publish; an admin's tools are refused to a
// member whatever its grants; changing the role applies on the next call.
func TestOrgRolesOverMCP(t *testing.T) {
	h := servertest.Start(t, server.Config{})
	owner := h.Owner(t)
	seedOrg(t, h, owner)
	for _, tool := range []string{"publish", "read_events", "list_invitations", "set_budget"} {
		servertest.Call[any](t, owner, "grant_tool", map[string]any{"worker": "w-maya", "tool": tool})
	}
	servertest.Call[any](t, owner, "subscribe", map[string]any{"stream": "s-inbox", "worker": "w-maya"})
	maya := h.Connect(t, "w-maya", servertest.Token(t, h.Store, "w-maya"))
	publish := map[string]any{"stream": "s-inbox", "body": "hello"}

	if got := servertest.CallErr(t, maya, "list_invitations", nil); !strings.Contains(got, "member may not call list_invitations: it is an admin's") {
		t.Errorf("a member's list_invitations: %q", got)
	}
	servertest.Call[any](t, maya, "publish", publish)

	servertest.Call[any](t, owner, "set_org_role", map[string]any{"worker": "w-maya", "role": "viewer"})
	if got := servertest.CallErr(t, maya, "publish", publish); !strings.Contains(got, "viewer may not call publish") {
		t.Errorf("a viewer's publish: %q", got)
	}
	servertest.Call[any](t, maya, "read_events", map[string]any{"streams": []string{"s-inbox"}})

	servertest.Call[any](t, owner, "set_org_role", map[string]any{"worker": "w-maya", "role": "admin"})
	servertest.Call[any](t, maya, "list_invitations", nil)
	servertest.Call[any](t, maya, "set_budget", map[string]any{"scope": "org", "tokens": 1000, "window": "day"})
}
