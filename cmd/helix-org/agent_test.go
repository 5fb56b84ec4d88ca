package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/helixml/helix-org/agent"
)

// TestAgentRunFailsClearly: `agent run` without what it needs ends at
// once with an error naming the fix, also as a stream-json result line so
// the activation log shows it. The key comes from the environment only and
// is gone from it once read.
func TestAgentRunFailsClearly(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{name: "no model", env: map[string]string{agent.EnvLLMAPIKey: "sk-x"}, want: "config set agent.model"},
		{name: "no key", args: []string{"--model", "m"}, want: "config set agent.api_key -"},
		{name: "no mcp.json", env: map[string]string{agent.EnvLLMModel: "m", agent.EnvLLMAPIKey: "sk-x"}, want: "no mcp.json"},
		{name: "keyless local server, no mcp.json", args: []string{"--provider", "openai", "--model", "m", "--base-url", "http://127.0.0.1:1/v1"}, want: "no mcp.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, k := range []string{agent.EnvLLMProvider, agent.EnvLLMModel, agent.EnvLLMBaseURL, agent.EnvLLMAPIKey} {
				t.Setenv(k, tt.env[k])
			}
			out, _, err := run(t, "the prompt", append([]string{"agent", "run", "--dir", t.TempDir()}, tt.args...)...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			var result struct {
				Type    string `json:"type"`
				IsError bool   `json:"is_error"`
				Result  string `json:"result"`
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if json.Unmarshal([]byte(lines[len(lines)-1]), &result); result.Type != "result" || !result.IsError || !strings.Contains(result.Result, tt.want) {
				t.Errorf("last stdout line %q, want an error result", lines[len(lines)-1])
			}
			if v, ok := os.LookupEnv(agent.EnvLLMAPIKey); ok && v != "" {
				t.Errorf("%s still set after agent run read it", agent.EnvLLMAPIKey)
			}
		})
	}
}
