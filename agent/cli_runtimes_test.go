package agent_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/domain"
)

// endpoint is what a tool's MCP config gives it: its servers' names, and
// the one server's URL and Authorization header as written.
type endpoint struct {
	servers   []string
	url, auth string
}

// cliCase is one agent CLI: its runtime, where its fake finds the config
// the runtime gave it, how to read that config as the tool documents it,
// how the tool expands a variable in it, and the relay variables it reads.
type cliCase struct {
	name    string
	rt      func(sb *agent.Bwrap) domain.Runtime
	config  string // a shell word the fake copies the config from
	session string // a line of the tool's output naming session "sess-1"
	read    func(t *testing.T, data []byte) endpoint
	expand  func(s string, env map[string]string) string
	relay   map[string]string // variable → value, from the run
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// dollarExpand is ${VAR} and $VAR, as Claude Code and Gemini CLI expand.
func dollarExpand(s string, env map[string]string) string {
	return os.Expand(s, func(k string) string { return env[k] })
}

func cliCases(run domain.Run) []cliCase {
	anthropic := map[string]string{"ANTHROPIC_BASE_URL": domain.RelayURL(run.BaseURL, domain.RelayAnthropic), "ANTHROPIC_API_KEY": run.Token}
	return []cliCase{
		{name: "claude", rt: func(sb *agent.Bwrap) domain.Runtime { return &agent.Claude{Sandbox: sb} }, config: "mcp.json",
			session: `{"type":"system","subtype":"init","session_id":"sess-1"}`,
			read: func(t *testing.T, data []byte) endpoint {
				var cfg struct {
					MCPServers map[string]struct {
						Type, URL string
						Headers   map[string]string
					} `json:"mcpServers"`
				}
				if err := json.Unmarshal(data, &cfg); err != nil {
					t.Fatalf("mcp.json: %v\n%s", err, data)
				}
				s := cfg.MCPServers[domain.MCPServerName]
				return endpoint{keys(cfg.MCPServers), s.URL, s.Headers["Authorization"]}
			},
			expand: dollarExpand, relay: anthropic},
		{name: "codex", rt: func(sb *agent.Bwrap) domain.Runtime { return &agent.Codex{Sandbox: sb} }, config: `"$CODEX_HOME/config.toml"`,
			session: `{"type":"thread.started","thread_id":"sess-1"}`,
			read: func(t *testing.T, data []byte) endpoint {
				var cfg struct {
					MCPServers map[string]map[string]any `toml:"mcp_servers"`
				}
				if _, err := toml.Decode(string(data), &cfg); err != nil {
					t.Fatalf("config.toml: %v\n%s", err, data)
				}
				s := cfg.MCPServers[domain.MCPServerName]
				if _, ok := s["bearer_token"]; ok {
					t.Errorf("config.toml holds a bearer_token:\n%s", data)
				}
				url, _ := s["url"].(string)
				envVar, _ := s["bearer_token_env_var"].(string)
				return endpoint{keys(cfg.MCPServers), url, "Bearer {" + envVar + "}"}
			},
			expand: bracedExpand("{", "}"),
			relay:  map[string]string{"OPENAI_BASE_URL": domain.RelayURL(run.BaseURL, domain.RelayOpenAI), "OPENAI_API_KEY": run.Token, "CODEX_API_KEY": run.Token}},
		{name: "gemini", rt: func(sb *agent.Bwrap) domain.Runtime { return &agent.Gemini{Sandbox: sb} }, config: ".gemini/settings.json",
			session: `{"type":"init","session_id":"sess-1","model":"m"}`,
			read: func(t *testing.T, data []byte) endpoint {
				var cfg struct {
					MCPServers map[string]struct {
						HTTPURL string            `json:"httpUrl"`
						Headers map[string]string `json:"headers"`
					} `json:"mcpServers"`
				}
				if err := json.Unmarshal(data, &cfg); err != nil {
					t.Fatalf("settings.json: %v\n%s", err, data)
				}
				s := cfg.MCPServers[domain.MCPServerName]
				return endpoint{keys(cfg.MCPServers), s.HTTPURL, s.Headers["Authorization"]}
			},
			expand: dollarExpand,
			relay:  map[string]string{"GOOGLE_GEMINI_BASE_URL": strings.TrimRight(run.BaseURL, "/") + "/relay/gemini", "GEMINI_API_KEY": run.Token}},
		{name: "opencode", rt: func(sb *agent.Bwrap) domain.Runtime { return &agent.OpenCode{Sandbox: sb} }, config: `"$OPENCODE_CONFIG"`,
			session: `{"type":"step_start","sessionID":"sess-1","part":{}}`,
			read: func(t *testing.T, data []byte) endpoint {
				var cfg struct {
					MCP map[string]struct {
						Type, URL string
						Headers   map[string]string
					} `json:"mcp"`
					Provider map[string]struct {
						Options map[string]string `json:"options"`
					} `json:"provider"`
				}
				if err := json.Unmarshal(data, &cfg); err != nil {
					t.Fatalf("opencode.json: %v\n%s", err, data)
				}
				s := cfg.MCP[domain.MCPServerName]
				if s.Type != "remote" {
					t.Errorf("opencode.json's server type = %q, want remote", s.Type)
				}
				if got := cfg.Provider["anthropic"].Options["baseURL"]; got != "{env:ANTHROPIC_BASE_URL}/v1" {
					t.Errorf("opencode.json's Anthropic baseURL = %q, want the relay's from the environment", got)
				}
				return endpoint{keys(cfg.MCP), s.URL, s.Headers["Authorization"]}
			},
			expand: bracedExpand("{env:", "}"), relay: anthropic},
	}
}

// bracedExpand expands open+VAR+close, as Codex names its token variable
// and OpenCode substitutes {env:VAR}.
func bracedExpand(open, close string) func(string, map[string]string) string {
	return func(s string, env map[string]string) string {
		for k, v := range env {
			s = strings.ReplaceAll(s, open+k+close, v)
		}
		return s
	}
}

// TestAgentCLIsGetPromptEndpointAndRelay runs, for each agent CLI, a fake
// of that name on PATH in the sandbox, which records what it was given:
// the prompt (over 200 KiB) arrives whole on stdin and not in argv; the
// MCP config parses in the tool's documented format and names only the
// worker's endpoint, its token passed in the environment, in no file; the
// relay's base URL and the run's token are in the tool's variables; no
// provider key of the server's is anywhere it can read; and the session
// id it reports comes back for the next run.
func TestAgentCLIsGetPromptEndpointAndRelay(t *testing.T) {
	// Made at run time, so the fake's search does not find it in the
	// test binary or in the fake itself, both of which the sandbox binds.
	canary := fmt.Sprintf("%d-%d", os.Getpid(), time.Now().UnixNano())
	for _, k := range []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "CODEX_API_KEY"} {
		t.Setenv(k, "sk-provider-"+canary)
	}
	prompt := strings.Repeat("helix-org prompt ", 300<<10/17) + "END"
	for _, tc := range cliCases(domain.Run{BaseURL: "http://127.0.0.1:1", Token: "hxa_run_token"}) {
		t.Run(tc.name, func(t *testing.T) {
			rec, bin := t.TempDir(), t.TempDir()
			fake := "#!/bin/sh\nprintf '%s\\n' \"$@\" > " + rec + "/args\ncat > " + rec + "/stdin\nenv > " + rec + "/env\n" +
				"cp " + tc.config + " " + rec + "/config\n" +
				"c=" + canary + "; grep -rl \"sk-provider-$c\" . \"$HOME\" /tmp > " + rec + "/canary 2>/dev/null\n" +
				"echo '" + tc.session + "'\n"
			if err := os.WriteFile(filepath.Join(bin, tc.name), []byte(fake), 0o755); err != nil {
				t.Fatal(err)
			}
			t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
			var log logSink
			run := newRun(t, &log)
			run.Token, run.Prompt = "hxa_run_token", prompt
			// dispatch writes mcp.json for every run; the others write their own.
			os.WriteFile(filepath.Join(run.EnvDir, "mcp.json"), domain.MCPConfig(), 0o600)
			res, err := tc.rt(sandbox(t, agent.SandboxPaths{Writable: []string{rec}})).Run(t.Context(), run)
			if err != nil || res.ExitStatus != 0 {
				t.Fatalf("run = %+v, %v; log %q", res, err, log.texts())
			}
			read := func(name string) string { b, _ := os.ReadFile(filepath.Join(rec, name)); return string(b) }
			if got := read("stdin"); got != prompt {
				t.Errorf("stdin: %d bytes, want the %d-byte prompt", len(got), len(prompt))
			}
			if args := read("args"); len(args) > 1024 || strings.Contains(args, "helix-org prompt") {
				t.Errorf("argv carries the prompt (%d bytes): %.200s", len(args), args)
			}
			env := map[string]string{}
			for line := range strings.SplitSeq(read("env"), "\n") {
				if k, v, ok := strings.Cut(line, "="); ok {
					env[k] = v
				}
			}
			for k, want := range tc.relay {
				if env[k] != want {
					t.Errorf("%s = %q, want %q", k, env[k], want)
				}
			}
			ep := tc.read(t, []byte(read("config")))
			if len(ep.servers) != 1 || ep.servers[0] != domain.MCPServerName {
				t.Errorf("MCP servers = %v, want only %s", ep.servers, domain.MCPServerName)
			}
			if got := tc.expand(ep.url, env); got != run.MCPURL {
				t.Errorf("MCP URL = %q (%q as the tool expands it), want the worker's endpoint %q", ep.url, got, run.MCPURL)
			}
			if got := tc.expand(ep.auth, env); got != "Bearer "+run.Token {
				t.Errorf("Authorization = %q (%q as the tool expands it), want the run's token from the environment", ep.auth, got)
			}
			if strings.Contains(read("env"), canary) || read("canary") != "" {
				t.Errorf("a provider key reached the agent: env has it: %v; files: %q", strings.Contains(read("env"), canary), read("canary"))
			}
			filepath.WalkDir(run.EnvDir, func(path string, d os.DirEntry, err error) error {
				if b, _ := os.ReadFile(path); err == nil && !d.IsDir() && strings.Contains(string(b), run.Token) {
					t.Errorf("%s holds the run's token", path)
				}
				return nil
			})
			if res.Session != "sess-1" {
				t.Errorf("session = %q, want the one the CLI reported, sess-1", res.Session)
			}
		})
	}
}
