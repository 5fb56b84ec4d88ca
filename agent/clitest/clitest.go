// Package clitest is the fake of each agent CLI (claude, codex, gemini,
// opencode) that the host and container tests run: a /bin/sh script of
// the tool's name that records what it was given, and the checks of that
// record against the tool's documented formats.
package clitest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"github.com/helixml/helix-org/domain"
)

// Session is the session id every fake reports.
const Session = "sess-1"

// Case is one agent CLI: where its fake finds the config the runtime gave
// it, what it prints, how to read its stdin and its config as the tool
// documents them, how the tool expands a variable in its config, and the
// relay variables it reads.
type Case struct {
	Name   string
	config string // a shell word the fake copies the config from
	output string // lines the fake prints: the session, and a turn's end
	prompt func(t *testing.T, stdin string) string
	read   func(t *testing.T, data []byte) endpoint
	expand func(s string, env map[string]string) string
	relay  map[string]string // variable → value, from the run
}

// endpoint is what a tool's MCP config gives it: its servers' names, and
// the one server's URL and Authorization header as written.
type endpoint struct {
	servers   []string
	url, auth string
}

// Cases are the four CLIs for run, as the agent sees it (on the host, or
// from inside its container).
func Cases(run domain.Run) []Case {
	anthropic := map[string]string{"ANTHROPIC_BASE_URL": domain.RelayURL(run.BaseURL, domain.RelayAnthropic), "ANTHROPIC_API_KEY": run.Token}
	raw := func(_ *testing.T, stdin string) string { return stdin }
	return []Case{
		{Name: "claude", config: "mcp.json", prompt: ClaudePrompt,
			output: `{"type":"system","subtype":"init","session_id":"` + Session + `"}` + "\n" + `{"type":"result","subtype":"success","result":"done"}`,
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
		{Name: "codex", config: `"$CODEX_HOME/config.toml"`, prompt: raw,
			output: `{"type":"thread.started","thread_id":"` + Session + `"}`,
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
		{Name: "gemini", config: ".gemini/settings.json", prompt: raw,
			output: `{"type":"init","session_id":"` + Session + `","model":"m"}`,
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
		{Name: "opencode", config: `"$OPENCODE_CONFIG"`, prompt: raw,
			output: `{"type":"step_start","sessionID":"` + Session + `","part":{}}`,
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

// ClaudePrompt is the prompt in Claude Code's stream-json input: the
// first line, a user message.
func ClaudePrompt(t *testing.T, stdin string) string {
	t.Helper()
	first, _, _ := strings.Cut(stdin, "\n")
	var m struct {
		Type    string `json:"type"`
		Message struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"message"`
	}
	if err := json.Unmarshal([]byte(first), &m); err != nil || m.Type != "user" || m.Message.Role != "user" {
		t.Errorf("claude's stdin does not open with a stream-json user message (%v): %.200q", err, first)
	}
	return m.Message.Content
}

// Output is what the fake prints, its session id replaced by id.
func (c Case) Output(id string) string { return strings.ReplaceAll(c.output, Session, id) }

// Fake is the fake of the tool: a /bin/sh script (busybox's will do) that
// records into rec its arguments, environment, config, where in its
// working directory, HOME and /tmp it finds canary, and its stdin, and
// prints the tool's session line and end of turn.
func (c Case) Fake(rec, canary string) string {
	return "#!/bin/sh\nmkdir -p " + rec + "\nprintf '%s\\n' \"$@\" > " + rec + "/args\nenv > " + rec + "/env\n" +
		"cp " + c.config + " " + rec + "/config\n" +
		// In halves, so the search does not find the fake itself.
		"a=" + canary[:len(canary)/2] + "; b=" + canary[len(canary)/2:] + "; grep -rl \"$a$b\" . \"$HOME\" /tmp > " + rec + "/canary 2>/dev/null\n" +
		"cat <<'EOF'\n" + c.output + "\nEOF\n" +
		"cat > " + rec + "/stdin\n"
}

// Check asserts what the fake recorded in rec, for run as the agent saw
// it: the prompt arrived whole on stdin and not in argv; the MCP config
// parses in the tool's documented format and names only the worker's
// endpoint, its token passed in the environment; the relay's base URL
// and the run's token are in the tool's variables; and canary, a provider
// key of the server's, is nowhere the agent could read.
func (c Case) Check(t *testing.T, run domain.Run, rec, prompt, canary string) {
	t.Helper()
	read := func(name string) string { b, _ := os.ReadFile(filepath.Join(rec, name)); return string(b) }
	if got := c.prompt(t, read("stdin")); got != prompt {
		t.Errorf("prompt on stdin: %d bytes, want the %d-byte prompt", len(got), len(prompt))
	}
	if args := read("args"); len(args) > 1024 || strings.Contains(args, prompt[:64]) {
		t.Errorf("argv carries the prompt (%d bytes): %.200s", len(args), args)
	}
	env := map[string]string{}
	for line := range strings.SplitSeq(read("env"), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			env[k] = v
		}
	}
	for k, want := range c.relay {
		if env[k] != want {
			t.Errorf("%s = %q, want %q", k, env[k], want)
		}
	}
	ep := c.read(t, []byte(read("config")))
	if len(ep.servers) != 1 || ep.servers[0] != domain.MCPServerName {
		t.Errorf("MCP servers = %v, want only %s", ep.servers, domain.MCPServerName)
	}
	if got := c.expand(ep.url, env); got != run.MCPURL {
		t.Errorf("MCP URL = %q (%q as the tool expands it), want the worker's endpoint %q", ep.url, got, run.MCPURL)
	}
	if got := c.expand(ep.auth, env); got != "Bearer "+run.Token {
		t.Errorf("Authorization = %q (%q as the tool expands it), want the run's token from the environment", ep.auth, got)
	}
	if strings.Contains(read("env"), canary) || read("canary") != "" {
		t.Errorf("a provider key reached the agent: env has it: %v; files: %q", strings.Contains(read("env"), canary), read("canary"))
	}
}

// NoTokenInFiles asserts no file under dir but those under skip holds
// the run's token: the tools' configs name it, they do not hold it.
func NoTokenInFiles(t *testing.T, dir, skip, token string) {
	t.Helper()
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && skip != "" && path == skip {
			return filepath.SkipDir
		}
		if b, _ := os.ReadFile(path); !d.IsDir() && strings.Contains(string(b), token) {
			t.Errorf("%s holds the run's token", path)
		}
		return nil
	})
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
