package tools

import (
	"testing"

	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestListMCPServers(t *testing.T) {
	runTable(t, "list_mcp_servers", []toolCase[listMCPServersOut]{
		{name: "none", want: listMCPServersOut{Servers: []mcpServerView{}}},
		{
			name:   "health and tool count, never the credential",
			setup:  func(t *testing.T, f fixture) { withTracker(t, f) },
			caller: "w-maya",
			want: listMCPServersOut{Servers: []mcpServerView{{Name: "tracker", Transport: "http", AuthType: "bearer", Healthy: true, Tools: 3,
				ToolNames: []string{"tracker__close_ticket", "tracker__get_ticket", "tracker__wait"}}}},
		},
	}, cmpopts.IgnoreFields(mcpServerView{}, "URL"))
}
