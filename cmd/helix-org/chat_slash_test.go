package main

import (
	"encoding/json"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/helixml/helix-org/agent/llm"
	"github.com/helixml/helix-org/agent/llm/llmtest"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/tools"
)

// userTexts are the texts of a turn's user messages, oldest first.
func userTexts(turn llmtest.Turn) []string {
	var out []string
	for _, m := range turn.Messages {
		if m.Role == llm.RoleUser && m.Text != "" {
			out = append(out, m.Text)
		}
	}
	return out
}

// TestChatSlashCommands: /role and /help reach the model as the prompts'
// templates, expanded on the server, while the terminal shows the line as
// typed and a one-line note; /help also lists the commands and tools; an
// unknown command or a missing argument is answered here without asking
// the model. Tool calls and results show as they run, one line each, or
// in full with --verbose.
func TestChatSlashCommands(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no claude
	fake := llmtest.New(t, llm.Anthropic, func(turn llmtest.Turn) llmtest.Reply {
		last := turn.Last()
		switch {
		case strings.Contains(last.Text, "Draft a Role for"):
			return llmtest.Reply{Text: "Saving it.", ToolCalls: []llm.ToolCall{llmtest.Call("create_role", map[string]any{
				"title": "Support Engineer", "content": "# Support Engineer\n\n## Tools\n- publish: answers\n\n" + tools.StayQuiet})}}
		case len(last.ToolResults) > 0:
			return llmtest.Reply{Text: "Saved as r-support-engineer. Shall I hire someone into it?"}
		}
		return llmtest.Reply{Text: "You can draft roles and hire."}
	})
	db := filepath.Join(t.TempDir(), "helix-org.db")
	url := serveURL(t, db)
	useFake(t, openStore(t, db), llm.Anthropic, fake)
	envs := t.TempDir()
	chat := func(stdin string, args ...string) string {
		t.Helper()
		out, errOut, err := run(t, stdin, append([]string{"chat", "--db", db, "--url", url, "--envs-dir", envs}, args...)...)
		if err != nil {
			t.Fatalf("chat: %v\n%s%s", err, out, errOut)
		}
		return out
	}

	out := chat("/x\n/role\n/role Support Engineer notes=\"refunds under $50 go to a human\"\n/help\n")
	turns := fake.Turns()
	if len(turns) != 3 {
		t.Fatalf("%d provider calls; want 3 (/role, its tool result, /help) — /x and a bare /role must not reach the model", len(turns))
	}
	role := turns[0].Last().Text
	wantAll(t, "the model's /role message", role, `Draft a Role for "Support Engineer"`, "## Tools", tools.StayQuiet,
		"It must cover: refunds under $50 go to a human", "offer to hire a worker into the role with the hire prompt")
	wantAll(t, "the model's /help message", turns[2].Last().Text, "You are w-owner in a helix-org organisation.", "- role: Draft a Role", "- hire: Hire a worker", "- publish: ")
	wantAll(t, "the terminal", out,
		"unknown command /x: /help lists what you can use",
		"error: /role needs title (the role's title, e.g. Support Engineer)\n  usage: /role <title> [notes=…]",
		`[prompt role title="Support Engineer" notes="refunds under $50 go to a human": `,
		"Saving it.\n  [create_role {\"content\":", `  [create_role → {"content":"# Support Engineer\n\n## Tools`,
		"Saved as r-support-engineer. Shall I hire someone into it?",
		// The owner holds more tools than fit the context budget.
		"/hire <role> [name=…] [kind=…]", "Tools you can use (", "find_tools, get_attachment, get_worker,",
		"You hold more: the model finds them with find_tools (helix-org tools lists them all).", "You can draft roles and hire.")
	for _, never := range []string{"## Purpose", "Draft a Role for", "Prompts you can use"} {
		if strings.Contains(out, never) {
			t.Errorf("the terminal shows the expanded template (%q):\n%s", never, out)
		}
	}
	if strings.Contains(out, `"id":"r-support-engineer"`) {
		t.Errorf("a tool result was not cut to one short line:\n%s", out)
	}
	// The history keeps what the model saw, so a resumed chat has it.
	if got := userTexts(turns[2]); len(got) != 2 || got[0] != role {
		t.Errorf("history user messages = %q", got)
	}

	// --verbose shows each result in full, over several lines.
	out = chat("/role Ops\n", "--verbose")
	wantAll(t, "verbose chat", out, "  [create_role →\n    {\"content\":", `"id":"r-support-engineer-2","title":"Support Engineer","updatedAt":`)
}

// owner is a scripted owner agent that follows the hire prompt's playbook
// as a model would: it reads the streams and tools out of the prompt's
// text and makes one step's tool calls per turn, each from the results
// before it. Activations (the new worker's hire) get a quiet answer.
func owner(turn llmtest.Turn) llmtest.Reply {
	texts := userTexts(turn)
	if len(texts) == 0 || !strings.Contains(texts[len(texts)-1], "hiring playbook") {
		return llmtest.Reply{Text: "Nothing to do."}
	}
	playbook := texts[len(texts)-1]
	find := func(re string) string {
		if m := regexp.MustCompile(re).FindStringSubmatch(playbook); m != nil {
			return m[1]
		}
		return ""
	}
	streams := strings.Split(find(`Streams section names: ([^\n]*)\.`), ", ")
	grants := strings.Split(find(`Tools section names exactly: ([^\n]*)\.`), ", ")
	result := func(name string) map[string]any {
		var v map[string]any
		json.Unmarshal([]byte(resultOf(turn, name)), &v)
		return v
	}
	switch {
	case turn.CallsTo("list_streams") == 0:
		return llmtest.Reply{Text: "Step 1: the streams.", ToolCalls: []llm.ToolCall{llmtest.Call("list_streams", map[string]any{})}}
	case turn.CallsTo("create_position") == 0:
		var calls []llm.ToolCall
		for _, s := range streams {
			if !strings.Contains(resultOf(turn, "list_streams"), `"id":"`+s+`"`) {
				calls = append(calls, llmtest.Call("create_stream", map[string]any{"id": s, "name": strings.TrimPrefix(s, "s-")}))
			}
		}
		calls = append(calls, llmtest.Call("create_position", map[string]any{"role": find(`into the role (\S+) `), "title": find(`create_position with role \S+ and title "([^"]+)"`)}))
		return llmtest.Reply{ToolCalls: calls}
	case turn.CallsTo("hire_worker") == 0:
		return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("hire_worker", map[string]any{"position": result("create_position")["id"],
			"kind": find(`with kind (\w+),`), "name": find(`with kind \w+, name "([^"]+)"`), "grants": grants})}}
	case turn.CallsTo("subscribe") == 0:
		var calls []llm.ToolCall
		for _, s := range streams {
			calls = append(calls, llmtest.Call("subscribe", map[string]any{"stream": s, "worker": result("hire_worker")["id"]}))
		}
		return llmtest.Reply{ToolCalls: calls}
	case turn.CallsTo("get_worker") == 0:
		return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("get_worker", map[string]any{"id": result("hire_worker")["id"]})}}
	}
	return llmtest.Reply{Text: "Hired: " + resultOf(turn, "get_worker")}
}

// resultOf is the result of the newest call to the tool name.
func resultOf(turn llmtest.Turn, name string) string {
	id := ""
	for _, m := range turn.Messages {
		for _, c := range m.ToolCalls {
			if c.Name == name {
				id = c.ID
			}
		}
	}
	for _, m := range turn.Messages {
		for _, r := range m.ToolResults {
			if r.CallID == id {
				return r.Content
			}
		}
	}
	return ""
}

// TestChatHirePlaybook: the owner types /hire; a scripted model follows
// the expanded playbook through the real tools over MCP, and the new
// worker ends with every stream of its role and exactly the role's tools.
func TestChatHirePlaybook(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	fake := llmtest.New(t, llm.OpenAI, owner)
	db := filepath.Join(t.TempDir(), "helix-org.db")
	st := openStore(t, db)
	base, _, ownerMCP := startServe(t, st, io.Discard)
	useFake(t, st, llm.OpenAI, fake)
	role := "# Support Engineer\n\n## Streams\n- `s-support`: questions arrive here\n- s-escalations: hand-offs to humans\n\n" +
		"## Tools\n- `publish`: to answer\n- read_events: for context\n\n" + tools.StayQuiet + "\n"
	servertest.Call[map[string]any](t, ownerMCP, "create_role", map[string]any{"id": "r-support-engineer", "title": "Support Engineer", "content": role})
	servertest.Call[map[string]any](t, ownerMCP, "create_stream", map[string]any{"id": "s-support", "name": "support"})

	out, errOut, err := run(t, "/hire r-support-engineer name=Sam\n", "chat", "--db", db, "--url", base, "--envs-dir", t.TempDir())
	if err != nil {
		t.Fatalf("chat: %v\n%s%s", err, out, errOut)
	}
	waitIdle(t, st)
	wantAll(t, "the terminal", out, `[prompt hire role="r-support-engineer" name="Sam"`, "  [list_streams {}]",
		`  [create_stream {"id":"s-escalations","name":"escalations"}]`, "  [hire_worker {", `  [subscribe → {`, "Hired: ")
	if strings.Contains(out, `"id":"s-support","name"`) {
		t.Errorf("the existing stream was created again:\n%s", out)
	}
	w := servertest.Call[struct {
		Worker  domain.Worker
		Streams []string
	}](t, ownerMCP, "get_worker", map[string]any{"id": "w-sam"})
	if w.Worker.Kind != domain.WorkerAI || w.Worker.Name != "Sam" {
		t.Errorf("worker = %+v", w.Worker)
	}
	for _, s := range []string{"s-support", "s-escalations"} {
		if !slices.Contains(w.Streams, s) {
			t.Errorf("w-sam follows %v; missing %s", w.Streams, s)
		}
	}
	granted, err := st.LiveTools(t.Context(), "w-sam")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(granted)
	if !slices.Equal(granted, []string{"publish", "read_events"}) {
		t.Errorf("w-sam holds %v; want exactly the role's tools [publish read_events]", granted)
	}
}
