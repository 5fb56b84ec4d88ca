package domain

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
)

// MCPPrices is the mcp.prices table: what one call of an outside tool
// costs, in US dollars, keyed by the tool's grantable name
// (<server>__<tool>) or by its server's name for every tool of it.
type MCPPrices map[string]float64

// ParseMCPPrices reads the mcp.prices JSON.
func ParseMCPPrices(raw string) (MCPPrices, error) {
	p := MCPPrices{}
	if strings.TrimSpace(raw) == "" {
		return p, nil
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(raw)))
	if err := dec.Decode(&p); err != nil {
		return nil, Invalid("mcp.prices", `want {"<server>__<tool>" or "<server>": <US dollars per call>, …}: %v`, err)
	}
	for k, v := range p {
		if k == "" {
			return nil, Invalid("mcp.prices", "a server or tool name is empty")
		}
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, Invalid("mcp.prices", "%s: a price must be zero or more US dollars per call", k)
		}
	}
	return p, nil
}

// Of is what one call of tool (<server>__<tool>) costs: its own price,
// else its server's; ok is false when neither is listed.
func (p MCPPrices) Of(tool string) (Money, bool) {
	if v, ok := p[tool]; ok {
		return USD(v), true
	}
	server, _, _ := strings.Cut(tool, OutsideToolSep)
	if v, ok := p[server]; ok {
		return USD(v), true
	}
	return 0, false
}

// MCPPricesSetting prices calls of outside tools for budgets and
// helix-org spend. Read on every call, so a `config set` applies to the
// next one; each call keeps the price it was charged at.
var MCPPricesSetting = SettingSpec{Key: "mcp.prices", Type: SettingJSON, Default: "{}", Validate: func(v string) error { _, err := ParseMCPPrices(v); return err },
	Description: `Prices of calls to outside MCP servers' tools, in US dollars per call, by tool or by server: {"github__issue_read": 0.001, "github": 0.0005}. A tool's own price wins over its server's. Unlisted tools cost no money; every outside call counts against a budget's calls limit either way.`}
