package main

import (
	"bytes"
	"encoding/json"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/agent/llm"
	"github.com/helixml/helix-org/agent/llm/llmtest"
	"github.com/helixml/helix-org/dispatch"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
)

var llmFormats = []string{llm.Anthropic, llm.OpenAI}

// builtinOrg is a served org whose activations run the built-in agent
// (this test binary as `helix-org agent run`) against a fake provider.
type builtinOrg struct {
	db    string
	st    *store.Store
	owner *mcp.ClientSession
	fake  *llmtest.Server
}

// useFake points the built-in agent's settings at fake.
func useFake(t *testing.T, st *store.Store, format string, fake *llmtest.Server) {
	t.Helper()
	for _, kv := range []struct {
		spec  domain.SettingSpec
		value string
	}{{agent.ProviderSetting, format}, {agent.ModelSetting, "fake-model"}, {agent.BaseURLSetting, fake.BaseURL()}, {agent.APIKeySetting, llmtest.APIKey}} {
		if err := st.SetSetting(t.Context(), kv.spec, kv.value); err != nil {
			t.Fatal(err)
		}
	}
}

// newBuiltinOrg serves an org with the getting-started echo worker, whose
// role is role, and waits for its hire activation to end.
func newBuiltinOrg(t *testing.T, format, role string, script llmtest.Script) builtinOrg {
	t.Helper()
	fake := llmtest.New(t, format, script) // first, so it outlives the server's activations
	db := filepath.Join(t.TempDir(), "helix-org.db")
	st, err := store.Open(t.Context(), db, store.Options{Transports: transports.Specs(), Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	st.SetSetting(t.Context(), agent.RuntimeSetting, agent.RuntimeBuiltin)
	useFake(t, st, format, fake)
	_, _, owner := startServe(t, st, io.Discard)
	call := func(name string, args map[string]any) {
		servertest.Call[map[string]any](t, owner, name, args)
	}
	call("create_role", map[string]any{"id": "r-echo", "title": "Echo", "content": role})
	call("create_position", map[string]any{"id": "p-echo", "role": "r-echo", "title": "Echo"})
	call("create_stream", map[string]any{"id": "s-inbox", "name": "inbox"})
	call("hire_worker", map[string]any{"id": "w-echo", "position": "p-echo", "kind": "ai", "name": "Echo", "grants": []string{"publish", "read_events", "list_streams"}})
	call("invite_workers", map[string]any{"stream": "s-inbox", "workers": []string{"w-echo", "w-owner"}})
	waitIdle(t, st)
	return builtinOrg{db: db, st: st, owner: owner, fake: fake}
}

// logOf reads w-echo's activation log as "kind: text" lines.
func (o builtinOrg) logOf(t *testing.T) string {
	t.Helper()
	out := servertest.Call[struct{ Events []domain.Event }](t, o.owner, "worker_log", map[string]any{"worker": "w-echo"})
	var b strings.Builder
	for _, ev := range out.Events {
		b.WriteString(ev.Message.Subject + ": " + ev.Message.Body + "\n")
	}
	return b.String()
}

func (o builtinOrg) activations(t *testing.T) []domain.Activation {
	t.Helper()
	acts, err := o.st.ListActivations(t.Context(), "w-echo")
	if err != nil {
		t.Fatal(err)
	}
	return acts
}

func wantAll(t *testing.T, what, text string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(text, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, text)
		}
	}
}

// TestBuiltinGettingStarted is the getting-started scenario (echo, then a
// live role edit to loud) through the real server, dispatcher and builtin
// runtime, the model a fake provider that reads role.md in its system
// prompt and the trigger in its prompt, for each wire format.
func TestBuiltinGettingStarted(t *testing.T) {
	for _, format := range llmFormats {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			o := newBuiltinOrg(t, format, "When a message arrives, reply `echo: <body>` on the same stream.", llmtest.FollowRole)
			hello := servertest.Call[domain.Event](t, o.owner, "publish", map[string]any{"stream": "s-inbox", "body": "hello"})
			reply := waitForReply(t, o.owner, "s-inbox", "w-echo", hello.Seq)
			if reply.Message.Body != "echo: hello" || reply.Message.InReplyTo != hello.ID || !strings.HasPrefix(reply.CausedBy, "a-") {
				t.Errorf("reply = %+v (causedBy %q), want echo: hello in reply to %s", reply.Message, reply.CausedBy, hello.ID)
			}
			servertest.Call[map[string]any](t, o.owner, "update_role", map[string]any{"id": "r-echo", "content": "When a message arrives, reply `loud: <BODY UPPERCASED>` on the same stream."})
			hello2 := servertest.Call[domain.Event](t, o.owner, "publish", map[string]any{"stream": "s-inbox", "body": "hello"})
			if reply := waitForReply(t, o.owner, "s-inbox", "w-echo", hello2.Seq); reply.Message.Body != "loud: HELLO" {
				t.Errorf("after update_role reply = %q, want loud: HELLO", reply.Message.Body)
			}
			waitIdle(t, o.st)

			acts := o.activations(t)
			if len(acts) != 3 {
				t.Fatalf("w-echo ran %d activations, want 3 (hire, hello, hello)", len(acts))
			}
			// hire: one model call; each hello: publish, then a final text.
			for i, want := range [][2]int64{{100, 10}, {200, 20}, {200, 20}} {
				if a := acts[i]; a.Status != domain.ActivationSucceeded || a.InputTokens != want[0] || a.OutputTokens != want[1] {
					t.Errorf("activation %d: %s, tokens %d/%d, want succeeded with %d/%d", i, a.Status, a.InputTokens, a.OutputTokens, want[0], want[1])
				}
			}
			wantAll(t, "activation log", o.logOf(t), "assistant: Nothing to do.", "assistant: Replying as my role says.",
				`tool_call: {"body":"echo: hello","inReplyTo":"`+hello.ID+`","stream":"s-inbox"}`, `tool_call: {"body":"loud: HELLO","inReplyTo":"`+hello2.ID+`","stream":"s-inbox"}`,
				"tool_result: {", "assistant: Replied.", "exit: succeeded")

			// Cost per activation and per worker is readable from the CLI.
			out := runActivations(t, "--db", o.db, "--worker", "w-echo")
			wantAll(t, "activations", out, "w-echo  succeeded", "WORKER  ACTIVATIONS  FAILED  IN TOKENS  OUT TOKENS  TOTAL TOKENS", "w-echo  3            0       500        50          550")
			var js struct {
				Workers []workerUsage `json:"workers"`
			}
			if err := json.Unmarshal([]byte(runActivations(t, "--db", o.db, "--json")), &js); err != nil {
				t.Fatal(err)
			}
			if want := []workerUsage{{Worker: "w-echo", Activations: 3, InputTokens: 500, OutputTokens: 50}}; len(js.Workers) != 1 || js.Workers[0] != want[0] {
				t.Errorf("per-worker totals = %+v, want %+v", js.Workers, want)
			}
		})
	}
}

// TestBuiltinMultiStepWithACorrection: list_streams, a publish to a
// mistyped stream that fails, a corrected publish, a final text — all in
// one activation, each step decided from the last one's real result.
func TestBuiltinMultiStepWithACorrection(t *testing.T) {
	for _, format := range llmFormats {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			o := newBuiltinOrg(t, format, "Tell the inbox which streams exist.", func(turn llmtest.Turn) llmtest.Reply {
				trigs := llmtest.Triggers(turn.Prompt())
				switch {
				case len(trigs) == 0:
					return llmtest.Reply{Text: "Nothing to do."}
				case turn.CallsTo("list_streams") == 0:
					return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("list_streams", map[string]any{})}}
				case turn.CallsTo("publish") == 0:
					var out struct{ Streams []domain.Stream }
					json.Unmarshal([]byte(turn.Results()[0].Content), &out)
					return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("publish", map[string]any{"stream": "s-inbx", "body": "streams: " + names(out.Streams)})}}
				case turn.CallsTo("publish") == 1 && strings.Contains(turn.Results()[0].Content, `stream "s-inbx": not found`):
					return llmtest.Reply{Text: "Typo; again.", ToolCalls: []llm.ToolCall{llmtest.Call("publish", map[string]any{"stream": trigs[0].Stream, "body": "streams: s-inbox"})}}
				case turn.CallsTo("publish") == 2:
					return llmtest.Reply{Text: "Told them."}
				}
				return llmtest.Reply{Text: "Confused."}
			})
			hello := servertest.Call[domain.Event](t, o.owner, "publish", map[string]any{"stream": "s-inbox", "body": "which streams?"})
			if reply := waitForReply(t, o.owner, "s-inbox", "w-echo", hello.Seq); reply.Message.Body != "streams: s-inbox" {
				t.Errorf("reply %q", reply.Message.Body)
			}
			waitIdle(t, o.st)
			wantAll(t, "activation log", o.logOf(t), `tool_call: {}`, `tool_result: error: stream "s-inbx": not found`, "assistant: Typo; again.", "assistant: Told them.", "exit: succeeded")
			if acts := o.activations(t); acts[1].Status != domain.ActivationSucceeded || acts[1].InputTokens != 400 {
				t.Errorf("activation %+v, want succeeded after 4 model calls", acts[1])
			}
		})
	}
}

// eventRequests scripts FollowRole but answers the first n requests of
// each event activation with fail.
func failFirst(n int, fail llmtest.Reply) (llmtest.Script, func() []llmtest.Turn) {
	var mu sync.Mutex
	var failed []llmtest.Turn
	return func(turn llmtest.Turn) llmtest.Reply {
			mu.Lock()
			defer mu.Unlock()
			if len(llmtest.Triggers(turn.Prompt())) > 0 && len(turn.Messages) == 1 && len(failed) < n {
				failed = append(failed, turn)
				return fail
			}
			return llmtest.FollowRole(turn)
		}, func() []llmtest.Turn {
			mu.Lock()
			defer mu.Unlock()
			return append([]llmtest.Turn(nil), failed...)
		}
}

func TestBuiltinWaitsOutARateLimit(t *testing.T) {
	for _, format := range llmFormats {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			script, failed := failFirst(1, llmtest.Reply{Status: 429, RetryAfter: "1", Text: "slow down"})
			o := newBuiltinOrg(t, format, "When a message arrives, reply `echo: <body>` on the same stream.", script)
			hello := servertest.Call[domain.Event](t, o.owner, "publish", map[string]any{"stream": "s-inbox", "body": "hello"})
			if reply := waitForReply(t, o.owner, "s-inbox", "w-echo", hello.Seq); reply.Message.Body != "echo: hello" {
				t.Errorf("reply %q", reply.Message.Body)
			}
			waitIdle(t, o.st)
			turns := o.fake.Turns()
			limited := failed()[0].At
			for _, tr := range turns {
				if tr.At.After(limited) && tr.At.Sub(limited) < time.Second {
					t.Errorf("a request %s after the 429; Retry-After asked for 1s", tr.At.Sub(limited))
				}
			}
			if acts := o.activations(t); acts[1].Status != domain.ActivationSucceeded {
				t.Errorf("activation after a 429: %s %s", acts[1].Status, acts[1].Error)
			}
		})
	}
}

func TestBuiltinServerErrorStormFailsClearly(t *testing.T) {
	for _, format := range llmFormats {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			script, failed := failFirst(100, llmtest.Reply{Status: 500, RetryAfter: "0", Text: "upstream exploded"})
			o := newBuiltinOrg(t, format, "When a message arrives, reply `echo: <body>` on the same stream.", script)
			servertest.Call[domain.Event](t, o.owner, "publish", map[string]any{"stream": "s-inbox", "body": "hello"})
			waitIdle(t, o.st)
			if n := len(failed()); n != 5 {
				t.Errorf("%d requests in the storm, want 5 attempts", n)
			}
			acts := o.activations(t)
			// The reason is the agent's own last error, not just its exit status.
			reason := format + ": HTTP 500 Internal Server Error: upstream exploded (gave up after 5 attempts)"
			if a := acts[len(acts)-1]; a.Status != domain.ActivationFailed || a.Error != reason+" (agent exited with status 1)" {
				t.Errorf("activation = %s (%s), want failed with %q", a.Status, a.Error, reason)
			}
			wantAll(t, "activation log", o.logOf(t), "error: "+reason, "exit: failed: "+reason+" (agent exited with status 1)")
			wantAll(t, "activations", runActivations(t, "--db", o.db), "failed", "upstream exploded (gave up after 5 attempts)", "w-echo  2            1")
		})
	}
}

// TestBuiltinSaysWhatIsMissing: on agent.runtime builtin with no model
// configured (unset, the example agent would answer instead), the agent
// never starts: the run fails at once with a clear error on its log, and
// its trigger is kept (here, with one attempt allowed, parked) rather
// than closed.
func TestBuiltinSaysWhatIsMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	db := filepath.Join(t.TempDir(), "helix-org.db")
	st, err := store.Open(t.Context(), db, store.Options{Transports: transports.Specs(), Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	st.SetSetting(t.Context(), agent.RuntimeSetting, agent.RuntimeBuiltin)
	st.SetSetting(t.Context(), agent.APIKeySetting, "sk-x")
	st.SetSetting(t.Context(), dispatch.MaxStartAttemptsSetting, "1")
	logs := &demoLogBuffer{}
	_, _, owner := startServe(t, st, logs)
	servertest.Call[map[string]any](t, owner, "create_position", map[string]any{"id": "p-echo", "role": store.OwnerRole, "title": "Echo"})
	servertest.Call[map[string]any](t, owner, "hire_worker", map[string]any{"id": "w-echo", "position": "p-echo", "kind": "ai", "name": "Echo"})
	waitIdle(t, st)
	o := builtinOrg{st: st, owner: owner}
	wantAll(t, "activation log", o.logOf(t), "exit: failed: did not start: the built-in agent has no model: set one with `helix-org config set agent.model <model>`",
		"parked: trigger(s) 1 parked: the agent failed to start 1 time(s)")
	// The server's log and `helix-org activations` say why, too.
	wantAll(t, "server log", logs.String(),
		`level=WARN msg="activation finished" component=dispatch worker=w-echo activation=a-`,
		`triggers=1 runtime=builtin outcome=failed`,
		`reason="did not start: the built-in agent has no model: set one with`)
	wantAll(t, "activations", runActivations(t, "--db", db), "failed", "did not start: the built-in agent has no model")
	if parked, _ := st.ListTriggers(t.Context(), store.TriggerQuery{Statuses: []domain.TriggerStatus{domain.TriggerParked}}); len(parked) != 1 {
		t.Errorf("parked triggers = %+v, want the hire trigger", parked)
	}
}

// runActivations executes the activations command on its own: building
// the whole root command writes package state that parallel servers read.
func runActivations(t *testing.T, args ...string) string {
	t.Helper()
	cmd := newActivationsCmd()
	var out bytes.Buffer
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	if err := cmd.ExecuteContext(t.Context()); err != nil {
		t.Fatalf("activations %v: %v\n%s", args, err, out.String())
	}
	return out.String()
}

func names(sts []domain.Stream) string {
	var ids []string
	for _, s := range sts {
		ids = append(ids, s.ID)
	}
	return strings.Join(ids, ",")
}

// TestRoleTextCannotTurnOnBash: a role whose front matter says `bash:
// true` — what a worker holding only update_role could write — gets no
// bash tool: the model is never offered one, and the activation log says
// the request was ignored. Only agent.bash, set by an operator for the
// role, offers it.
func TestRoleTextCannotTurnOnBash(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	offered := map[string]bool{} // prompt's first trigger body → bash offered
	o := newBuiltinOrg(t, llm.Anthropic, "---\nbash: true\n---\nWhen a message arrives, reply `echo: <body>` on the same stream.", func(turn llmtest.Turn) llmtest.Reply {
		if trigs := llmtest.Triggers(turn.Prompt()); len(trigs) > 0 {
			mu.Lock()
			offered[trigs[0].Body] = slices.ContainsFunc(turn.Tools, func(tool llm.Tool) bool { return tool.Name == agent.BashToolName })
			mu.Unlock()
		}
		return llmtest.FollowRole(turn)
	})
	ask := func(body string) {
		t.Helper()
		ev := servertest.Call[domain.Event](t, o.owner, "publish", map[string]any{"stream": "s-inbox", "body": body})
		waitForReply(t, o.owner, "s-inbox", "w-echo", ev.Seq)
		waitIdle(t, o.st)
	}
	ask("config off")
	if err := o.st.SetSetting(t.Context(), agent.BashSetting, `{"roles":["r-echo"]}`); err != nil {
		t.Fatal(err)
	}
	ask("config on")
	mu.Lock()
	defer mu.Unlock()
	if offered["config off"] || !offered["config on"] {
		t.Errorf("bash offered: with only the role asking %v, with agent.bash for the role %v; want false, true", offered["config off"], offered["config on"])
	}
	for _, turn := range o.fake.Turns() {
		if len(llmtest.Triggers(turn.Prompt())) == 0 && slices.ContainsFunc(turn.Tools, func(tool llm.Tool) bool { return tool.Name == agent.BashToolName }) {
			t.Error("the hire activation was offered bash")
		}
	}
	log := o.logOf(t)
	note := "note: role r-echo asks for `bash: true` in its front matter; ignored: role text cannot turn on host capabilities, only an operator can (helix-org config set agent.bash)"
	if n := strings.Count(log, note); n != 2 {
		t.Errorf("the note is on the log %d times, want 2 (hire and the first message, not once bash is on):\n%s", n, log)
	}
}
