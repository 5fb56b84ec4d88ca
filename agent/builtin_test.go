package agent_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/agent/llm"
	"github.com/helixml/helix-org/agent/llm/llmtest"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server"
	"github.com/helixml/helix-org/server/servertest"
)

var formats = []string{llm.Anthropic, llm.OpenAI}

// org is a real server with an AI worker w-echo, and w-echo's environment
// directory as the dispatcher would write it.
type org struct {
	h   *servertest.Harness
	dir string
}

func newOrg(t *testing.T, role string) org {
	t.Helper()
	h := servertest.Start(t, server.Config{})
	owner := h.Owner(t)
	call := func(name string, args map[string]any) {
		servertest.Call[map[string]any](t, owner, name, args)
	}
	call("create_role", map[string]any{"id": "r-echo", "title": "Echo", "content": role})
	call("create_position", map[string]any{"id": "p-echo", "role": "r-echo", "title": "Echo"})
	call("create_stream", map[string]any{"id": "s-inbox", "name": "inbox"})
	call("hire_worker", map[string]any{"id": "w-echo", "position": "p-echo", "kind": "ai", "name": "Echo", "grants": []string{"publish", "read_events", "list_streams"}})
	call("invite_workers", map[string]any{"stream": "s-inbox", "workers": []string{"w-echo"}})
	dir := t.TempDir()
	// As the runtimes do: the token in the environment, never in a file.
	t.Setenv(domain.TokenEnv, servertest.Token(t, h.Store, "w-echo"))
	t.Setenv(domain.MCPURLEnv, h.URL("w-echo"))
	files := map[string]string{"role.md": role, "identity.md": "# Echo\n\nWorker id: w-echo\n", "agent.md": "Act, then stop.",
		"mcp.json": string(domain.MCPConfig())}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return org{h: h, dir: dir}
}

// run runs one built-in activation in o's environment against fake and
// returns what its stream-json turns into on the activation log.
func (o org) run(t *testing.T, format string, fake *llmtest.Server, cfg agent.LLMConfig) ([]string, domain.RunResult, error) {
	t.Helper()
	cfg.Provider, cfg.Model, cfg.APIKey = format, "fake-model", llmtest.APIKey
	if fake != nil {
		cfg.BaseURL = fake.BaseURL()
	}
	var out bytes.Buffer
	err := agent.RunBuiltin(t.Context(), o.dir, "[1/1] event e-1 on stream s-inbox (seq 1)\n  body:\n    hello\n", cfg, &out)
	var log logSink
	var res domain.RunResult
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		agent.LogLine(line, log.add, &res)
	}
	return log.texts(), res, err
}

func TestBuiltinOffersTheWorkersToolsFaithfully(t *testing.T) {
	for _, format := range formats {
		t.Run(format, func(t *testing.T) {
			o := newOrg(t, "Say hello.")
			fake := llmtest.New(t, format, func(llmtest.Turn) llmtest.Reply { return llmtest.Reply{Text: "Nothing to do."} })
			if _, _, err := o.run(t, format, fake, agent.LLMConfig{}); err != nil {
				t.Fatal(err)
			}
			cs := o.h.Connect(t, "w-echo", servertest.Token(t, o.h.Store, "w-echo"))
			listed, err := cs.ListTools(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var want []llm.Tool
			for _, tool := range listed.Tools {
				schema, _ := json.Marshal(tool.InputSchema)
				want = append(want, llm.Tool{Name: tool.Name, Description: tool.Description, Schema: schema})
			}
			got := fake.Turns()[0]
			if diff := cmp.Diff(want, got.Tools, normalJSON); diff != "" {
				t.Errorf("tools offered (-tools/list +on the wire):\n%s", diff)
			}
			if len(want) != 3 {
				t.Errorf("tools/list gave %d tools, want w-echo's 3 grants", len(want))
			}
			for _, part := range []string{`<file name="role.md">` + "\nSay hello.\n</file>", `<file name="identity.md">`, "Act, then stop.", "need not read them"} {
				if !strings.Contains(got.System, part) {
					t.Errorf("system prompt lacks %q:\n%s", part, got.System)
				}
			}
			if strings.Contains(got.System, "bash") {
				t.Error("the system prompt mentions bash, which is off")
			}
		})
	}
}

var normalJSON = cmp.Transformer("json", func(r json.RawMessage) any {
	var v any
	json.Unmarshal(r, &v)
	return v
})

// TestBuiltinMultiStep: list_streams, then publish what it found, then a
// final text — each step decided from the previous step's real result.
func TestBuiltinMultiStep(t *testing.T) {
	for _, format := range formats {
		t.Run(format, func(t *testing.T) {
			o := newOrg(t, "List the streams, then say which exist on s-inbox.")
			fake := llmtest.New(t, format, func(turn llmtest.Turn) llmtest.Reply {
				switch {
				case turn.CallsTo("list_streams") == 0:
					return llmtest.Reply{Text: "Let me look.", ToolCalls: []llm.ToolCall{llmtest.Call("list_streams", map[string]any{})}}
				case turn.CallsTo("publish") == 0:
					var out struct{ Streams []domain.Stream }
					json.Unmarshal([]byte(turn.Results()[0].Content), &out)
					var ids []string
					for _, s := range out.Streams {
						ids = append(ids, s.ID)
					}
					return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("publish", map[string]any{"stream": "s-inbox", "body": "streams: " + strings.Join(ids, ",")})},
						Usage: llm.Usage{InputTokens: 200, OutputTokens: 20}}
				}
				return llmtest.Reply{Text: "Done.", Usage: llm.Usage{InputTokens: 300, OutputTokens: 5}}
			})
			log, res, err := o.run(t, format, fake, agent.LLMConfig{MaxTurns: 5})
			if err != nil {
				t.Fatal(err)
			}
			want := []string{
				"assistant::Let me look.",
				"tool_call:list_streams:{}",
				"tool_result::", // the streams, checked below
				`tool_call:publish:{"body":"streams: s-activations-w-echo,s-inbox,s-org","stream":"s-inbox"}`,
				"tool_result::",
				"assistant::Done.",
			}
			if len(log) != len(want) {
				t.Fatalf("log:\n%s", strings.Join(log, "\n"))
			}
			for i := range want {
				if !strings.HasPrefix(log[i], want[i]) {
					t.Errorf("log[%d] = %q, want prefix %q", i, log[i], want[i])
				}
			}
			if res.InputTokens != 600 || res.OutputTokens != 35 {
				t.Errorf("usage %d/%d, want 600/35 summed over three calls", res.InputTokens, res.OutputTokens)
			}
			owner := o.h.Owner(t)
			servertest.Call[any](t, owner, "subscribe", map[string]any{"stream": "s-inbox"})
			evs := servertest.Call[struct{ Events []domain.Event }](t, owner, "read_events", map[string]any{"streams": []string{"s-inbox"}})
			if n := len(evs.Events); n != 1 || evs.Events[0].Message.Body != "streams: s-activations-w-echo,s-inbox,s-org" || evs.Events[0].Source != "w-echo" {
				t.Errorf("s-inbox holds %+v", evs.Events)
			}
		})
	}
}

// TestBuiltinToolErrorGoesBackToTheModel: a publish to a stream that does
// not exist fails; the model reads the error and publishes correctly.
func TestBuiltinToolErrorGoesBackToTheModel(t *testing.T) {
	for _, format := range formats {
		t.Run(format, func(t *testing.T) {
			o := newOrg(t, "Reply on the inbox.")
			var sawError llm.ToolResult
			fake := llmtest.New(t, format, func(turn llmtest.Turn) llmtest.Reply {
				switch turn.CallsTo("publish") {
				case 0:
					return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("publish", map[string]any{"stream": "s-inbx", "body": "hi"})}}
				case 1:
					sawError = turn.Results()[0]
					if !strings.Contains(sawError.Content, "not found") {
						return llmtest.Reply{Text: "I give up."}
					}
					return llmtest.Reply{Text: "Wrong stream id; fixing.", ToolCalls: []llm.ToolCall{llmtest.Call("publish", map[string]any{"stream": "s-inbox", "body": "hi"})}}
				}
				return llmtest.Reply{Text: "Done."}
			})
			log, _, err := o.run(t, format, fake, agent.LLMConfig{MaxTurns: 5})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(sawError.Content, `stream "s-inbx": not found`) {
				t.Errorf("the model was told %q", sawError.Content)
			}
			// Anthropic carries the error flag; Chat Completions has none, so it is in the text.
			if format == llm.Anthropic && !sawError.IsError || format == llm.OpenAI && !strings.HasPrefix(sawError.Content, "Error: ") {
				t.Errorf("the result does not say it is an error: %+v", sawError)
			}
			if !strings.Contains(strings.Join(log, "\n"), `tool_result::error: stream "s-inbx": not found`) {
				t.Errorf("the activation log does not show the error:\n%s", strings.Join(log, "\n"))
			}
			if got := fake.Turns(); len(got) != 3 || got[2].Last().ToolResults[0].IsError {
				t.Errorf("%d model calls; the corrected publish should succeed", len(got))
			}
		})
	}
}

func TestBuiltinBadCallsAreErrorsForTheModel(t *testing.T) {
	o := newOrg(t, "x")
	var results []llm.ToolResult
	fake := llmtest.New(t, llm.Anthropic, func(turn llmtest.Turn) llmtest.Reply {
		if len(turn.Results()) > 0 {
			results = turn.Results()
			return llmtest.Reply{Text: "ok"}
		}
		return llmtest.Reply{ToolCalls: []llm.ToolCall{
			llmtest.Call("dismiss_worker", map[string]any{"id": "w-owner"}),         // not granted: not offered
			llmtest.Call("bash", map[string]any{"command": "id"}),                   // off
			llmtest.Call("publish", map[string]any{"stream": "s-inbox", "body": 5}), // breaks the schema
		}}
	})
	if _, _, err := o.run(t, llm.Anthropic, fake, agent.LLMConfig{}); err != nil {
		t.Fatal(err)
	}
	want := []string{`there is no tool "dismiss_worker"`, `there is no tool "bash"`, "body"}
	for i, w := range want {
		if !results[i].IsError || !strings.Contains(results[i].Content, w) {
			t.Errorf("result %d = %+v, want an error mentioning %q", i, results[i], w)
		}
	}
}

func TestBuiltinStopsAtMaxTurns(t *testing.T) {
	o := newOrg(t, "x")
	fake := llmtest.New(t, llm.OpenAI, func(llmtest.Turn) llmtest.Reply {
		return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("list_streams", map[string]any{})}}
	})
	log, res, err := o.run(t, llm.OpenAI, fake, agent.LLMConfig{MaxTurns: 3})
	if err == nil || !strings.Contains(err.Error(), "stopped after 3 model turns") {
		t.Fatalf("err = %v", err)
	}
	if n := len(fake.Turns()); n != 3 {
		t.Errorf("%d model calls, want 3", n)
	}
	if last := log[len(log)-1]; !strings.HasPrefix(last, "error::stopped after 3") {
		t.Errorf("last log entry %q", last)
	}
	if res.InputTokens != 300 {
		t.Errorf("usage of a failed run = %d, want 300 still counted", res.InputTokens)
	}
}

func TestBuiltinConfigErrorsAreClear(t *testing.T) {
	o := newOrg(t, "x")
	tests := []struct {
		name string
		cfg  agent.LLMConfig
		dir  string
		want string
	}{
		{"no model", agent.LLMConfig{Provider: llm.Anthropic, APIKey: "k"}, o.dir, "helix-org config set agent.model"},
		{"no key", agent.LLMConfig{Provider: llm.Anthropic, Model: "m"}, o.dir, "helix-org config set agent.api_key -"},
		{"not an env dir", agent.LLMConfig{Provider: llm.Anthropic, Model: "m", APIKey: "k"}, t.TempDir(), "no mcp.json"},
		{"unknown provider", agent.LLMConfig{Provider: "gemini", Model: "m", APIKey: "k"}, o.dir, `unknown provider "gemini"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			err := agent.RunBuiltin(t.Context(), tt.dir, "p", tt.cfg, &out)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			var log logSink
			agent.LogLine(strings.TrimSpace(out.String()), log.add, &domain.RunResult{})
			if got := log.texts(); len(got) != 1 || got[0] != "error::"+err.Error() {
				t.Errorf("activation log = %q, want the run's error %q", got, err)
			}
		})
	}
}

// TestBuiltinBash: the bash tool is offered only when the config says so
// (cfg.Bash, set by the server from agent.bash); a role's front matter
// asking for it is ignored. Bash never sees the provider key.
func TestBuiltinBash(t *testing.T) {
	tests := []struct {
		name, role string
		cfgBash    bool
		want       bool
	}{
		{"config on", "Use the shell.", true, true},
		{"role asks, config off", "---\nbash: true\n---\nUse the shell.", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(agent.EnvLLMAPIKey, "sk-must-not-leak")
			o := newOrg(t, tt.role)
			var result llm.ToolResult
			fake := llmtest.New(t, llm.Anthropic, func(turn llmtest.Turn) llmtest.Reply {
				if len(turn.Results()) > 0 {
					result = turn.Results()[0]
					return llmtest.Reply{Text: "ok"}
				}
				return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("bash", map[string]any{"command": "pwd; ls; env"})}}
			})
			if _, _, err := o.run(t, llm.Anthropic, fake, agent.LLMConfig{Bash: tt.cfgBash}); err != nil {
				t.Fatal(err)
			}
			turn := fake.Turns()[0]
			offered := slices.ContainsFunc(turn.Tools, func(tool llm.Tool) bool { return tool.Name == "bash" })
			if offered != tt.want || strings.Contains(turn.System, "bash tool") != tt.want {
				t.Fatalf("bash offered = %v, in the system prompt = %v; want %v", offered, strings.Contains(turn.System, "bash tool"), tt.want)
			}
			if !tt.want {
				if !result.IsError || !strings.Contains(result.Content, `there is no tool "bash"`) {
					t.Errorf("a call to bash that is off = %+v", result)
				}
				return
			}
			if result.IsError || !strings.Contains(result.Content, o.dir+"\n") || !strings.Contains(result.Content, "role.md") {
				t.Errorf("bash ran as %+v", result)
			}
			if strings.Contains(result.Content, "sk-must-not-leak") {
				t.Error("the provider key reached a bash command")
			}
		})
	}
}

func TestBashScope(t *testing.T) {
	tests := []struct {
		value        string
		worker, role string
		want         bool
	}{
		{"{}", "w-x", "r-dev", false},
		{"", "w-x", "r-dev", false},
		{`{"roles":["r-dev"]}`, "w-x", "r-dev", true},
		{`{"roles":["r-dev"]}`, "w-x", "r-ops", false},
		{`{"workers":["w-x"]}`, "w-x", "r-ops", true},
		{`{"all":true}`, "w-y", "r-ops", true},
		{"true", "w-y", "r-ops", true}, // the old bool, set by an operator
		{"false", "w-y", "r-ops", false},
	}
	for _, tt := range tests {
		b, err := agent.ParseBashScope(tt.value)
		if err != nil || b.Allows(tt.worker, tt.role) != tt.want {
			t.Errorf("ParseBashScope(%q).Allows(%s, %s) = %v, %v; want %v", tt.value, tt.worker, tt.role, b.Allows(tt.worker, tt.role), err, tt.want)
		}
	}
	for _, bad := range []string{`{"role":["r-dev"]}`, `{"roles":"r-dev"}`, "yes"} {
		if _, err := agent.ParseBashScope(bad); err == nil || !strings.Contains(err.Error(), "agent.bash") {
			t.Errorf("ParseBashScope(%q) = %v, want an error naming agent.bash", bad, err)
		}
	}
}

func TestBashLimits(t *testing.T) {
	dir := t.TempDir()
	b := &agent.Bash{Dir: dir, Timeout: 300 * time.Millisecond, MaxOutput: 100}
	tests := []struct {
		name, command string
		wantErr       bool
		want          string
	}{
		{"output", "echo hi", false, "hi\n"},
		{"nothing", "true", false, "(no output)"},
		{"exit status", "echo oops >&2; exit 3", true, "oops\nexit status 3"},
		{"cut output", "seq 1 1000", false, "… (output cut at 100 bytes)"},
		{"timeout", "echo started; exec sleep 30", true, "started\ncommand timed out after 300ms"},
		{"no command", "", true, `bash needs {"command"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, isErr := b.Run(t.Context(), map[string]any{"command": tt.command})
			if isErr != tt.wantErr || !strings.Contains(out, tt.want) {
				t.Errorf("Run(%q) = %q, %v; want %q, %v", tt.command, out, isErr, tt.want, tt.wantErr)
			}
			if len(out) > 200 {
				t.Errorf("output of %d bytes passed the cap", len(out))
			}
		})
	}
}

func TestRoleAsksForBash(t *testing.T) {
	tests := []struct {
		role string
		want bool
	}{
		{"---\nbash: true\n---\n# Ops", true},
		{"---\ntitle: x\nbash: true\n---\n", true},
		{"---\nbash: false\n---\n", false},
		{"# Ops\nbash: true\n", false},
		{"---\ntitle: x\n---\nbash: true\n", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := agent.RoleAsksForBash(tt.role); got != tt.want {
			t.Errorf("RoleAsksForBash(%q) = %v", tt.role, got)
		}
	}
}

// TestBuiltinRuntimeRunsTheBinary: the runtime runs `<exe> agent run` in
// the env dir with the prompt on stdin, points the child at the relay
// with the run's token — never the provider's URL and key — and reads its
// stream-json into the log and the usage.
func TestBuiltinRuntimeRunsTheBinary(t *testing.T) {
	t.Setenv("HELIX_ORG_SECRET_CANARY", "do-not-leak")
	dir := t.TempDir()
	out := filepath.Join(dir, "out.jsonl")
	os.WriteFile(out, []byte(`{"type":"assistant","message":{"content":[{"type":"text","text":"hi"}]}}
{"type":"result","subtype":"success","is_error":false,"result":"hi","usage":{"input_tokens":7,"output_tokens":3}}
`), 0o600)
	exe := filepath.Join(dir, "helix-org")
	os.WriteFile(exe, []byte("#!/bin/sh\necho \"args: $*\" >&2\necho \"stdin: $(cat)\" >&2\nenv | grep -E '^HELIX_ORG_(LLM|SECRET)' | sort >&2\ncat "+out+"\n"), 0o755)
	var log logSink
	run := newRun(t, &log)
	cfg := agent.LLMConfig{Provider: "openai", Model: "qwen3", BaseURL: "http://127.0.0.1:11434/v1", APIKey: "sk-server-only", MaxTurns: 7, MaxTokens: 99, Bash: true}
	res, err := (&agent.Builtin{Exe: exe, LLM: cfg}).Run(t.Context(), run)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"output::stderr: args: agent run",
		"output::stderr: stdin: hello prompt",
		"output::stderr: HELIX_ORG_LLM_API_KEY=" + run.Token,
		"output::stderr: HELIX_ORG_LLM_BASE_URL=http://127.0.0.1:1/relay/openai/v1",
		"output::stderr: HELIX_ORG_LLM_BASH=true",
		"output::stderr: HELIX_ORG_LLM_MAX_TOKENS=99",
		"output::stderr: HELIX_ORG_LLM_MAX_TURNS=7",
		"output::stderr: HELIX_ORG_LLM_MODEL=qwen3",
		"output::stderr: HELIX_ORG_LLM_PROVIDER=openai",
		"assistant::hi",
	}
	// stdout and stderr are read apart, so their lines interleave as they
	// come; each keeps its own order.
	got := log.texts()
	stdout := func(line string) int {
		if strings.HasPrefix(line, "output::stderr: ") {
			return 0
		}
		return 1
	}
	slices.SortStableFunc(got, func(a, b string) int { return stdout(a) - stdout(b) })
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
	if res.InputTokens != 7 || res.OutputTokens != 3 || res.ExitStatus != 0 {
		t.Errorf("result = %+v", res)
	}
	if got := agent.LLMConfigFromEnv(envOf(cfg.Environ())); got != cfg {
		t.Errorf("config through the environment = %+v, want %+v", got, cfg)
	}
	for _, kv := range append(agent.Environ(run), cfg.ForRun(run).Environ()...) {
		if strings.Contains(kv, "sk-server-only") || strings.Contains(kv, "11434") {
			t.Errorf("an agent's environment holds the provider's %q", kv)
		}
	}
}

func envOf(kvs []string) func(string) string {
	m := map[string]string{}
	for _, kv := range kvs {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return func(k string) string { return m[k] }
}

// TestBuiltinReadsALinkedResult: a read_events result over the server's
// inline limit arrives as a resource link; from the next turn the model is
// offered read_resource, and reads the result a part at a time.
func TestBuiltinReadsALinkedResult(t *testing.T) {
	o := newOrg(t, "Read the inbox.")
	owner := o.h.Owner(t)
	servertest.Call[any](t, owner, "subscribe", map[string]any{"stream": "s-inbox"})
	body := strings.Repeat("é", 10<<10) // 20 KiB of two-byte characters
	servertest.Call[any](t, owner, "publish", map[string]any{"stream": "s-inbox", "body": body})
	fake := llmtest.New(t, llm.Anthropic, func(turn llmtest.Turn) llmtest.Reply {
		switch {
		case turn.CallsTo("read_events") == 0:
			return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("read_events", map[string]any{"streams": []string{"s-inbox"}})}}
		case turn.CallsTo(agent.ReadResourceToolName) == 0:
			var link struct{ URI string }
			for _, line := range strings.Split(turn.Results()[0].Content, "\n") {
				if json.Unmarshal([]byte(line), &link) == nil && link.URI != "" {
					break
				}
			}
			return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call(agent.ReadResourceToolName, map[string]any{"uri": link.URI, "limit": 1001})}}
		}
		return llmtest.Reply{Text: "Read."}
	})
	if _, _, err := o.run(t, llm.Anthropic, fake, agent.LLMConfig{MaxTurns: 5}); err != nil {
		t.Fatal(err)
	}
	turns := fake.Turns()
	offered := func(i int) bool {
		return slices.ContainsFunc(turns[i].Tools, func(tl llm.Tool) bool { return tl.Name == agent.ReadResourceToolName })
	}
	if len(turns) != 3 || offered(0) || !offered(1) {
		t.Fatalf("%d turns; read_resource offered on the first: %v, after the link: %v", len(turns), offered(0), len(turns) > 1 && offered(1))
	}
	part := turns[2].Results()[0]
	text, note, _ := strings.Cut(part.Content, "\n… (bytes 0-")
	var end, total int
	fmt.Sscanf(note, "%d of %d", &end, &total)
	if part.IsError || !strings.HasPrefix(text, `{"cursor":`) || !utf8.ValidString(text) || len(text) != end || end < 1000 || end > 1001 || total <= 20<<10 {
		t.Errorf("read_resource = %+v; want the first 1001 bytes or one less (never half an é) and where to go on", part)
	}
}
