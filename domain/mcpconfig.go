package domain

import (
	"encoding/json"
	"os"
	"strings"
)

// MCPServerName is the MCP server name agents see in their run's
// mcp.json; Claude Code prefixes its tools with mcp__helix-org__. A run
// has one worker's endpoint only, so the name needs no more.
const MCPServerName = "helix-org"

// MCPClientName is the name a person's client gives one worker's
// endpoint (helix-org-w-maya): a client may hold several workers' at
// once, and the names must not collide.
func MCPClientName(worker string) string { return MCPServerName + "-" + worker }

// TokenEnv is the variable that carries a run's token to its agent. No
// file holds the token: a worker's directory is readable by whatever the
// agent runs, and by other workers' agents on the same host.
const TokenEnv = "HELIX_ORG_TOKEN"

// ToolSearchHeader, sent as "off" with a request to a worker's endpoint,
// lists every tool the worker holds however many: for a client that is
// not a model's (the CLI), or one that can call only the tools listed
// and defers loading them itself (Claude Code). Others with more tools
// than fit a model's context are listed a core and find_tools.
const ToolSearchHeader = "Helix-Org-Tool-Search"

// MCPURLEnv is the variable that carries a run's MCP endpoint to its
// agent: the host's loopback address for a process, the agents network's
// gateway for a container.
const MCPURLEnv = "HELIX_ORG_MCP_URL"

// MCPURL is a worker's MCP endpoint on a server reached at base (such as
// http://127.0.0.1:8080). Every URL of an endpoint is built here.
func MCPURL(base, worker string) string {
	return strings.TrimRight(base, "/") + "/workers/" + worker + "/mcp"
}

// MCPConfig renders the mcp.json that Claude Code and other clients read.
// Its URL and Authorization header refer to ${HELIX_ORG_MCP_URL} and
// ${HELIX_ORG_TOKEN}, which Claude Code expands from its environment (as
// ReadMCPConfig does): the file holds no secret and is the same wherever
// the agent runs, so it is written once per run, before the runtime is
// known.
func MCPConfig() []byte { return MCPConfigNamed(MCPServerName) }

// MCPConfigNamed is MCPConfig with the server under another name, such as
// a chat's helix-org-<worker>.
//
// Claude Code calls only the tools tools/list gives it and defers loading
// them itself, so it asks for every one (ToolSearchHeader); the built-in
// agent reads only the URL and token here and finds what is not listed.
func MCPConfigNamed(name string) []byte {
	b, _ := json.MarshalIndent(map[string]any{"mcpServers": map[string]any{name: map[string]any{
		"type": "http", "url": "${" + MCPURLEnv + "}",
		"headers": map[string]string{"Authorization": "Bearer ${" + TokenEnv + "}", ToolSearchHeader: "off"},
	}}}, "", "  ")
	return append(b, '\n')
}

// ReadMCPConfig returns the URL and token from an mcp.json, expanding
// ${VAR} references with getenv (os.Getenv when nil) as Claude Code does.
// It reads the MCPServerName entry, or the only one there is.
func ReadMCPConfig(data []byte, getenv func(string) string) (url, token string, err error) {
	var cfg struct {
		MCPServers map[string]struct {
			URL     string            `json:"url"`
			Headers map[string]string `json:"headers"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		return "", "", err
	}
	if getenv == nil {
		getenv = os.Getenv
	}
	s, ok := cfg.MCPServers[MCPServerName]
	if !ok && len(cfg.MCPServers) == 1 {
		for _, only := range cfg.MCPServers {
			s = only
		}
	}
	tok := expandEnv(s.Headers["Authorization"], getenv)
	tok, _ = strings.CutPrefix(tok, "Bearer ")
	return expandEnv(s.URL, getenv), tok, nil
}

// expandEnv replaces ${VAR} (only that form, as Claude Code's .mcp.json
// does) and leaves anything else as written.
func expandEnv(s string, getenv func(string) string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			return b.String() + s
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			return b.String() + s
		}
		b.WriteString(s[:i])
		b.WriteString(getenv(s[i+2 : i+j]))
		s = s[i+j+1:]
	}
}
