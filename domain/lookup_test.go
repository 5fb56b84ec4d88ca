package domain_test

import (
	"errors"
	"testing"

	"github.com/helixml/helix-org/domain"
)

// TestLookupSuggests: a mistyped key names the nearest known one; a key
// nothing like any other names none; either way the error is ErrInvalid
// and says it once.
func TestLookupSuggests(t *testing.T) {
	reg := domain.Settings{{Key: "agent.model"}, {Key: "agent.max_turns"}, {Key: "dispatch.max_concurrent"}, {Key: "dispatch.timeout"}}
	tests := []struct{ key, want string }{
		{"agent.modle", `unknown config key "agent.modle"; did you mean "agent.model"?`},
		{"agnet.model", `unknown config key "agnet.model"; did you mean "agent.model"?`},
		{"dispatch.max_concurent", `unknown config key "dispatch.max_concurent"; did you mean "dispatch.max_concurrent"?`},
		{"dispatch.timout", `unknown config key "dispatch.timout"; did you mean "dispatch.timeout"?`},
		{"nope", `unknown config key "nope"`},
		{"model", `unknown config key "model"`},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			_, err := reg.Lookup(tt.key)
			if err == nil || err.Error() != tt.want {
				t.Errorf("Lookup(%q) = %v, want %s", tt.key, err, tt.want)
			}
			if !errors.Is(err, domain.ErrInvalid) {
				t.Errorf("Lookup(%q) error is not ErrInvalid", tt.key)
			}
		})
	}
	if spec, err := reg.Lookup("agent.model"); err != nil || spec.Key != "agent.model" {
		t.Errorf("Lookup of a known key = %+v, %v", spec, err)
	}
}

// TestMCPClientName: clients name each worker's endpoint apart, and a
// config written under such a name reads back.
func TestMCPClientName(t *testing.T) {
	if got := domain.MCPClientName("w-maya"); got != "helix-org-w-maya" {
		t.Errorf("MCPClientName = %q", got)
	}
	data := domain.MCPConfigNamed(domain.MCPClientName("w-maya"))
	env := map[string]string{domain.TokenEnv: "hxo_x", domain.MCPURLEnv: "http://127.0.0.1:8080/workers/w-maya/mcp"}
	url, tok, err := domain.ReadMCPConfig(data, func(k string) string { return env[k] })
	if err != nil || url != "http://127.0.0.1:8080/workers/w-maya/mcp" || tok != "hxo_x" {
		t.Errorf("ReadMCPConfig = %q, %q, %v", url, tok, err)
	}
}
