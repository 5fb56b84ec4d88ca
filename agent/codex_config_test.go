package agent_test

import (
	"testing"

	"github.com/BurntSushi/toml"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/domain"
)

// TestCodexConfigReadsBack: the config.toml a run writes is what a TOML
// parser reads back, whatever the model name or URL holds.
func TestCodexConfigReadsBack(t *testing.T) {
	tests := []struct{ name, model, url string }{
		{"plain", "gpt-5-codex", "http://127.0.0.1:8080/workers/w-dev/mcp"},
		{"no model", "", "http://127.0.0.1:8080/workers/w-dev/mcp"},
		{"quotes and backslashes", `my "best" \model\`, `http://h/workers/w"x/mcp`},
		{"control characters", "line\nbreak\ttab\rcr\x00nul\x1besc\x7fdel", "http://h/mcp"},
		{"unicode", "modèle-ü-日本", "http://h/workers/w-é/mcp"},
		{"looks like TOML", "x\"\n[mcp_servers.evil]\nurl = \"http://evil\"", "http://h/mcp"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := agent.CodexConfig(domain.Run{MCPURL: tt.url}, tt.model)
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				Model          string `toml:"model"`
				ApprovalPolicy string `toml:"approval_policy"`
				SandboxMode    string `toml:"sandbox_mode"`
				Workspace      struct {
					NetworkAccess *bool `toml:"network_access"`
				} `toml:"sandbox_workspace_write"`
				MCPServers map[string]struct {
					URL               string            `toml:"url"`
					BearerTokenEnvVar string            `toml:"bearer_token_env_var"`
					HTTPHeaders       map[string]string `toml:"http_headers"`
				} `toml:"mcp_servers"`
			}
			md, err := toml.Decode(string(data), &got)
			if err != nil {
				t.Fatalf("config.toml does not parse: %v\n%s", err, data)
			}
			if undecoded := md.Undecoded(); len(undecoded) > 0 {
				t.Errorf("config.toml holds keys nobody asked for: %v\n%s", undecoded, data)
			}
			srv, ok := got.MCPServers[domain.MCPServerName]
			if got.Model != tt.model || got.ApprovalPolicy != "never" || got.SandboxMode != "workspace-write" ||
				got.Workspace.NetworkAccess == nil || *got.Workspace.NetworkAccess || len(got.MCPServers) != 1 || !ok ||
				srv.URL != tt.url || srv.BearerTokenEnvVar != domain.TokenEnv || srv.HTTPHeaders[domain.ToolSearchHeader] != "off" {
				t.Fatalf("config.toml reads back as %+v\n%s", got, data)
			}
		})
	}
}
