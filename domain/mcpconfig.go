package domain

import "encoding/json"

// MCPServerName is the MCP server name agents see; Claude Code prefixes its
// tools with mcp__helix-org__.
const MCPServerName = "helix-org"

// MCPConfig renders an mcp.json that Claude Code and other clients read.
func MCPConfig(url, token string) []byte {
	b, _ := json.MarshalIndent(map[string]any{"mcpServers": map[string]any{MCPServerName: map[string]any{
		"type": "http", "url": url, "headers": map[string]string{"Authorization": "Bearer " + token},
	}}}, "", "  ")
	return append(b, '\n')
}

// ReadMCPConfig returns the URL and token from an mcp.json written by MCPConfig.
func ReadMCPConfig(data []byte) (url, token string, err error) {
	var cfg struct {
		MCPServers map[string]struct {
			URL     string            `json:"url"`
			Headers map[string]string `json:"headers"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		return "", "", err
	}
	s := cfg.MCPServers[MCPServerName]
	const p = "Bearer "
	tok := s.Headers["Authorization"]
	if len(tok) > len(p) {
		tok = tok[len(p):]
	}
	return s.URL, tok, nil
}
