package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/agent/clitest"
	"github.com/helixml/helix-org/domain"
)

type logSink struct {
	mu      sync.Mutex
	entries []domain.LogEntry
}

func (l *logSink) add(e domain.LogEntry) {
	l.mu.Lock()
	l.entries = append(l.entries, e)
	l.mu.Unlock()
}

func (l *logSink) texts() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, e := range l.entries {
		out = append(out, string(e.Kind)+":"+e.Tool+":"+e.Text)
	}
	return out
}

func newRun(t *testing.T, log *logSink) domain.Run {
	return domain.Run{ActivationID: "a-1", WorkerID: "w-echo", EnvDir: t.TempDir(), BaseURL: "http://127.0.0.1:1", MCPURL: "http://127.0.0.1:1/workers/w-echo/mcp",
		Token: "hxa_test", Prompt: "hello prompt", Timeout: time.Minute, Log: log.add}
}

func TestCommandRunsInEnvWithPromptAndAllowListedEnvironment(t *testing.T) {
	t.Setenv("HELIX_ORG_SECRET_CANARY", "do-not-leak")
	t.Setenv("ANTHROPIC_API_KEY", "sk-canary")
	var log logSink
	run := newRun(t, &log)
	res, err := (&agent.Command{Line: `pwd; cat; echo; env | sort; echo oops >&2; exit 3`}).Run(t.Context(), run)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitStatus != 3 {
		t.Errorf("exit status = %d, want 3", res.ExitStatus)
	}
	out := strings.Join(log.texts(), "\n")
	for _, want := range []string{"output::" + run.EnvDir, "output::hello prompt", "HELIX_ORG_MCP_URL=" + run.MCPURL, "HELIX_ORG_TOKEN=hxa_test",
		"HELIX_ORG_WORKER=w-echo", "HELIX_ORG_ENV_DIR=" + run.EnvDir, "HELIX_ORG_ACTIVATION=a-1", "output::stderr: oops",
		// Any Anthropic or OpenAI client finds the relay, keyed by the run's token.
		"ANTHROPIC_BASE_URL=http://127.0.0.1:1/relay/anthropic", "ANTHROPIC_API_KEY=hxa_test",
		"OPENAI_BASE_URL=http://127.0.0.1:1/relay/openai/v1", "OPENAI_API_KEY=hxa_test"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	for _, leak := range []string{"do-not-leak", "sk-canary"} {
		if strings.Contains(out, leak) {
			t.Errorf("server environment leaked %q into the agent", leak)
		}
	}
}

// TestCommandSurvivesAHugeLine: a line over the 1 MiB cap is logged in
// pieces and what follows it still arrives; the agent is never left
// blocked on a pipe no one reads.
func TestCommandSurvivesAHugeLine(t *testing.T) {
	var log logSink
	res, err := (&agent.Command{Line: `head -c 2500000 /dev/zero | tr '\0' x; echo; echo after the long line`}).Run(t.Context(), newRun(t, &log))
	if err != nil || res.ExitStatus != 0 {
		t.Fatalf("run = %+v, %v", res, err)
	}
	var xs int
	for _, line := range log.texts() {
		xs += strings.Count(line, "x")
	}
	if out := strings.Join(log.texts(), "\n"); xs != 2500000 || !strings.Contains(out, "output::after the long line") {
		t.Errorf("logged %d of 2500000 x's; after the long line arrived: %v", xs, strings.Contains(out, "after the long line"))
	}
}

func TestCommandStopsOnCancelWithSIGTERM(t *testing.T) {
	var log logSink
	ctx, cancel := context.WithCancel(t.Context())
	run := newRun(t, &log)
	run.Log = func(e domain.LogEntry) {
		log.add(e)
		if e.Text == "ready" {
			cancel()
		}
	}
	start := time.Now()
	_, err := (&agent.Command{Line: `trap 'echo got TERM; exit 0' TERM; echo ready; while :; do sleep 0.05; done`}).Run(ctx, run)
	if err == nil {
		t.Error("cancelled run returned no error")
	}
	if el := time.Since(start); el > agent.StopGrace {
		t.Errorf("stop took %s; SIGTERM should end it before the SIGKILL grace", el)
	}
	if !slices.Contains(log.texts(), "output::got TERM") {
		t.Errorf("the agent did not see SIGTERM: %q", log.texts())
	}
}

const streamJSON = `{"type":"system","subtype":"init","session_id":"s1"}
{"type":"assistant","message":{"content":[{"type":"text","text":"Replying now."},{"type":"tool_use","id":"t1","name":"mcp__helix-org__publish","input":{"stream":"s-inbox","body":"echo: hi"}}]}}
{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"{\"id\":\"e-1\"}"}]}]}}
{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t2","content":"no such stream","is_error":true}]}}
not json at all
{"type":"result","subtype":"success","is_error":false,"result":"done","usage":{"input_tokens":120,"cache_creation_input_tokens":2000,"cache_read_input_tokens":30000,"output_tokens":30}}
`

func TestClaudeParsesStreamJSON(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.jsonl")
	os.WriteFile(out, []byte(streamJSON), 0o600)
	args, stdin := filepath.Join(dir, "args"), filepath.Join(dir, "stdin")
	bin := filepath.Join(dir, "claude")
	os.WriteFile(bin, []byte("#!/bin/sh\necho \"$@\" > "+args+"\ncat > "+stdin+"\ncat "+out+"\n"), 0o755)
	var log logSink
	res, err := (&agent.Claude{Bin: bin, Model: "claude-x", Effort: "high"}).Run(t.Context(), newRun(t, &log))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"assistant::Replying now.",
		`tool_call:mcp__helix-org__publish:{"stream":"s-inbox","body":"echo: hi"}`,
		`tool_result::{"id":"e-1"}`,
		"tool_result::error: no such stream",
		"output::not json at all",
	}
	if diff := cmp.Diff(want, log.texts()); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
	// Input counts what the prompt cache wrote and read, as the relay does.
	if res.InputTokens != 32120 || res.OutputTokens != 30 {
		t.Errorf("usage = %d/%d, want 32120/30", res.InputTokens, res.OutputTokens)
	}
	got, _ := os.ReadFile(args)
	for _, w := range []string{"-p --input-format stream-json", "--mcp-config mcp.json", "--output-format stream-json", "--verbose", "--model claude-x", "--effort high"} {
		if !strings.Contains(string(got), w) {
			t.Errorf("claude args %q lack %q", got, w)
		}
	}
	if strings.Contains(string(got), "hello prompt") {
		t.Errorf("claude args %q carry the prompt; it belongs on stdin", got)
	}
	if in, _ := os.ReadFile(stdin); clitest.ClaudePrompt(t, string(in)) != "hello prompt" {
		t.Errorf("claude read %q on stdin, want the prompt as a stream-json user message", in)
	}
}

// TestClaudeResultErrorsAreReadable: a failed result's error reads as
// what went wrong, whether Claude Code put it in result (a failed API call
// comes as a "success" with is_error), in errors (the error_* subtypes,
// which may have no result), or nowhere but the subtype.
func TestClaudeResultErrorsAreReadable(t *testing.T) {
	tests := []struct {
		name, line, want string
	}{
		{"api error", `{"type":"result","subtype":"success","is_error":true,"result":"API Error: 529 Overloaded"}`, "API Error: 529 Overloaded"},
		{"errors", `{"type":"result","subtype":"error_during_execution","is_error":true,"errors":["No conversation found with session ID: s9"," "]}`,
			"No conversation found with session ID: s9"},
		{"two errors", `{"type":"result","subtype":"error_during_execution","is_error":true,"errors":["tool crashed","then gave up"]}`, "tool crashed; then gave up"},
		{"max turns", `{"type":"result","subtype":"error_max_turns","is_error":true,"num_turns":31}`, "the agent stopped at its turn limit without finishing"},
		{"budget", `{"type":"result","subtype":"error_max_budget_usd","is_error":true}`, "the agent stopped at its spending limit without finishing"},
		{"silent", `{"type":"result","subtype":"error_during_execution","is_error":true,"result":""}`, "the agent failed during its run and said nothing of why"},
		{"unknown", `{"type":"result","subtype":"error_new_kind","is_error":true}`, "the agent ended with an error (error_new_kind)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, want := claudeLog(t, tt.line), []string{"error::" + tt.want}; !slices.Equal(got, want) {
				t.Errorf("log = %q, want %q", got, want)
			}
		})
	}
}

// TestClaudeNotesModelRetries: Claude Code's notice that a model request
// failed and will be retried is a note on the run's log, so a run waiting
// out a failing provider says why.
func TestClaudeNotesModelRetries(t *testing.T) {
	tests := []struct {
		name, line, want string
	}{
		{"overloaded", `{"type":"system","subtype":"api_retry","attempt":2,"max_retries":10,"retry_delay_ms":4120,"error_status":529,"error":"Overloaded","session_id":"s1"}`,
			"retry: a model request failed (HTTP 529: Overloaded); attempt 2 of 10 in 4.1s"},
		{"a status alone", `{"type":"system","subtype":"api_retry","attempt":1,"max_retries":10,"retry_delay_ms":500,"error_status":429,"error":""}`,
			"retry: a model request failed (HTTP 429); attempt 1 of 10 in 500ms"},
		{"no response", `{"type":"system","subtype":"api_retry","attempt":1,"max_retries":1,"retry_delay_ms":0,"error_status":null,"error":"timeout","no_response":{"first_byte_timeout_ms":60000}}`,
			"retry: a model request failed (no answer began in time); attempt 1 of 1 in 0s"},
		{"nothing said", `{"type":"system","subtype":"api_retry","attempt":3}`, "retry: a model request failed (no reason given); attempt 3 in 0s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, want := claudeLog(t, tt.line), []string{"note::" + tt.want}; !slices.Equal(got, want) {
				t.Errorf("log = %q, want %q", got, want)
			}
		})
	}
}

// claudeLog is what a run of Claude Code logs when it writes lines.
func claudeLog(t *testing.T, lines ...string) []string {
	t.Helper()
	dir := t.TempDir()
	out := filepath.Join(dir, "out.jsonl")
	os.WriteFile(out, []byte(strings.Join(lines, "\n")+"\n"), 0o600)
	bin := filepath.Join(dir, "claude")
	os.WriteFile(bin, []byte("#!/bin/sh\ncat > /dev/null\ncat "+out+"\n"), 0o755)
	var log logSink
	if _, err := (&agent.Claude{Bin: bin}).Run(t.Context(), newRun(t, &log)); err != nil {
		t.Fatal(err)
	}
	return log.texts()
}

// TestPromptOfAnySizeReachesTheAgent: a prompt far over the kernel's
// 128 KiB cap on one argument reaches every process runtime whole, on the
// host and in the sandbox, and each reports its start with the agent's
// process group. In the sandbox Claude Code is run where its name leads,
// through a symlink from a directory the sandbox does not have.
func TestPromptOfAnySizeReachesTheAgent(t *testing.T) {
	dir := t.TempDir()
	got := filepath.Join(dir, "got")
	claude := filepath.Join(t.TempDir(), "claude")
	os.WriteFile(claude, []byte("#!/bin/sh\ncat > "+got+"\n"), 0o755)
	linked := filepath.Join(t.TempDir(), "claude")
	if err := os.Symlink(claude, linked); err != nil {
		t.Fatal(err)
	}
	sb := sandbox(t, agent.SandboxPaths{Writable: []string{dir}})
	prompt := strings.Repeat("0123456789abcdef", 64<<10) // 1 MiB
	raw := func(_ *testing.T, s string) string { return s }
	for _, tt := range []struct {
		name   string
		rt     domain.Runtime
		prompt func(*testing.T, string) string // the prompt in what stdin got
	}{
		{"claude", &agent.Claude{Bin: claude}, clitest.ClaudePrompt},
		{"command", &agent.Command{Line: "cat > " + got}, raw},
		{"claude in the sandbox", &agent.Claude{Bin: linked, Sandbox: sb}, clitest.ClaudePrompt},
		{"command in the sandbox", &agent.Command{Line: "cat > " + got, Sandbox: sb}, raw},
	} {
		t.Run(tt.name, func(t *testing.T) {
			os.Remove(got)
			var log logSink
			run := newRun(t, &log)
			run.Prompt = prompt
			var procs []domain.AgentProcess
			run.OnStart = func(p domain.AgentProcess) { procs = append(procs, p) }
			res, err := tt.rt.Run(t.Context(), run)
			if err != nil || res.ExitStatus != 0 {
				t.Fatalf("run = %+v, %v; log %q", res, err, log.texts())
			}
			if data, _ := os.ReadFile(got); tt.prompt(t, string(data)) != prompt {
				t.Errorf("the agent got %d bytes for a %d-byte prompt", len(data), len(prompt))
			}
			if len(procs) != 1 || procs[0].PGID <= 0 || procs[0].StartTicks == 0 {
				t.Errorf("started reports = %+v, want one with the process group and its start time", procs)
			}
		})
	}
}

func TestClaudeBypassesPermissionsOnlyWhenIsolated(t *testing.T) {
	run := domain.Run{Prompt: "p"}
	host := strings.Join((&agent.Claude{}).Args(run), " ")
	box := strings.Join((&agent.Claude{Isolated: true}).Args(run), " ")
	if strings.Contains(host, "dangerously") || !strings.Contains(host, "--allowedTools mcp__helix-org") {
		t.Errorf("host args = %q: want restricted to helix-org MCP tools", host)
	}
	if !strings.Contains(box, "--dangerously-skip-permissions") {
		t.Errorf("isolated args = %q", box)
	}
}

// TestMissingAgentNeverStarts: a runtime that cannot start its agent
// says why and never reports a start, which is how the dispatcher knows
// to retry the run's triggers rather than close them.
func TestMissingAgentNeverStarts(t *testing.T) {
	for _, tt := range []struct {
		name string
		rt   domain.Runtime
		want string
	}{
		{"claude not on PATH", &agent.Claude{Bin: "definitely-not-claude"}, "not found on PATH"},
		{"command unset", &agent.Command{}, "agent.command is not set"},
		{"builtin without executable", &agent.Builtin{}, "executable is unknown"},
		{"builtin executable gone", &agent.Builtin{Exe: filepath.Join(t.TempDir(), "gone")}, "no such file"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var log logSink
			run := newRun(t, &log)
			started := false
			run.OnStart = func(domain.AgentProcess) { started = true }
			_, err := tt.rt.Run(t.Context(), run)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
			if started {
				t.Error("the runtime reported a start for an agent that never ran")
			}
		})
	}
}
