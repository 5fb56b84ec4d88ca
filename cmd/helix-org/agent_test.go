package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/domain"
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

// TestAgentRunFrom: `agent run --from DIR` takes the run from a directory
// as the kubernetes runtime mounts its Secret — variables from the files
// named like them, the prompt from prompt, DIR as the environment
// directory — and says what is missing.
func TestAgentRunFrom(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{name: "the model and key from files, no mcp.json", files: map[string]string{"prompt": "hi", agent.EnvLLMModel: "m", agent.EnvLLMAPIKey: "sk-x"}, want: "no mcp.json in "},
		{name: "no model file", files: map[string]string{"prompt": "hi", agent.EnvLLMAPIKey: "sk-x"}, want: "config set agent.model"},
		{name: "no prompt", files: map[string]string{agent.EnvLLMModel: "m"}, want: "the run has no prompt"},
		{name: "mcp.json without the token's file", files: map[string]string{"prompt": "hi", agent.EnvLLMModel: "m", agent.EnvLLMAPIKey: "sk-x",
			"mcp.json": string(domain.MCPConfig()), domain.MCPURLEnv: "http://127.0.0.1:1/workers/w-a/mcp"}, want: "no token for the helix-org server"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, k := range []string{agent.EnvLLMProvider, agent.EnvLLMModel, agent.EnvLLMBaseURL, agent.EnvLLMAPIKey, domain.TokenEnv, domain.MCPURLEnv} {
				t.Setenv(k, "")
			}
			dir := t.TempDir()
			for name, body := range tt.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o400); err != nil {
					t.Fatal(err)
				}
			}
			_, _, err := run(t, "", "agent", "run", "--from", dir)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}
