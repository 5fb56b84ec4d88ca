package main

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/agent/llm"
	"github.com/helixml/helix-org/agent/llm/llmtest"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
)

// analyst is the demo's scripted model: it follows demos/skills/role.md,
// deciding each step from the last tool result. Its first handler has a
// syntax error, which it fixes from the build log create_skill returns.
func analyst(turn llmtest.Turn) llmtest.Reply {
	trigs := llmtest.Triggers(turn.Prompt())
	if len(trigs) == 0 {
		return llmtest.Reply{Text: "Nothing to do."}
	}
	q := trigs[0]
	_, csv, _ := strings.Cut(q.Body, "\n")
	results := turn.Results()
	last := ""
	if len(results) > 0 {
		last = results[0].Content
	}
	switch {
	case turn.CallsTo("list_skills") == 0:
		return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("list_skills", map[string]any{})}}
	case turn.CallsTo("call_skill") > 0 && turn.CallsTo("publish") == 0:
		var out struct {
			Output json.RawMessage `json:"output"`
		}
		json.Unmarshal([]byte(last), &out)
		return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("publish", map[string]any{"stream": q.Stream, "inReplyTo": q.Event, "body": string(out.Output)})}}
	case turn.CallsTo("call_skill") > 0:
		return llmtest.Reply{Text: "Answered."}
	case turn.CallsTo("create_skill") == 0 && strings.Contains(last, `"csv_sum"`):
		return callCSV(csv)
	case turn.CallsTo("create_skill") == 0:
		return llmtest.Reply{Text: "No skill sums CSV columns; I will build one.", ToolCalls: []llm.ToolCall{createCSV("for x in; do\n")}}
	case strings.Contains(last, "syntax error"):
		return llmtest.Reply{Text: "The build log shows a syntax error; fixing the handler.", ToolCalls: []llm.ToolCall{createCSV(csvHandler)}}
	}
	return callCSV(csv)
}

func createCSV(handler string) llm.ToolCall {
	return llmtest.Call("create_skill", with(csvSkill, "handler", handler))
}

func callCSV(csv string) llmtest.Reply {
	return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("call_skill", map[string]any{"name": "csv_sum", "input": map[string]any{"csv": csv}})}}
}

// TestDemoSkills is demos/skills/README.md end to end: the real server,
// dispatcher and built-in agent, the model scripted, the skill built and
// run by the real Docker Engine.
func TestDemoSkills(t *testing.T) {
	t.Parallel()
	fake := llmtest.New(t, llm.Anthropic, analyst)
	st, _ := dockerStore(t, t.TempDir())
	skillSetup(t, st)
	st.SetSetting(t.Context(), agent.RuntimeSetting, agent.RuntimeBuiltin)
	useFake(t, st, llm.Anthropic, fake)
	_, _, owner := startServe(t, st, io.Discard)
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"create_role", map[string]any{"id": "r-analyst", "title": "Analyst", "content": demoRole(t, "skills")}},
		{"create_position", map[string]any{"id": "p-analyst", "role": "r-analyst", "title": "Analyst"}},
		{"create_stream", map[string]any{"id": "s-questions", "name": "questions"}},
		{"hire_worker", map[string]any{"id": "w-analyst", "position": "p-analyst", "kind": "ai", "name": "Analyst",
			"grants": []string{"publish", "read_events", "list_skills", "create_skill", "call_skill"}}},
		{"invite_workers", map[string]any{"stream": "s-questions", "workers": []string{"w-analyst", "w-owner"}}},
	} {
		servertest.Call[map[string]any](t, owner, c.tool, c.args)
	}
	waitIdle(t, st)
	// On failure, show what the analyst did.
	t.Cleanup(func() {
		if t.Failed() {
			evs, _ := st.ReadEvents(context.Background(), store.EventQuery{StreamIDs: []string{domain.ActivationStreamPrefix + "w-analyst"}})
			for _, ev := range evs {
				t.Logf("analyst log: %s: %s", ev.Message.Subject, ev.Message.Body)
			}
		}
	})

	ask := func(csv string) string {
		q := servertest.Call[domain.Event](t, owner, "publish", map[string]any{"stream": "s-questions", "body": "Please sum the columns of this CSV:\n" + csv})
		reply := waitForReply(t, owner, "s-questions", "w-analyst", q.Seq)
		waitIdle(t, st)
		return reply.Message.Body
	}
	if got := ask("q1,q2\n10,20\n5,7"); got != `{"q1":15,"q2":27}` {
		t.Errorf("first answer = %q", got)
	}
	sk, err := st.GetSkill(t.Context(), "csv_sum")
	if err != nil || sk.Version != 2 || sk.Status != domain.SkillReady || sk.CreatedBy != "w-analyst" {
		t.Fatalf("skill = %+v, %v; want version 2 (after the fix), ready, by w-analyst", sk, err)
	}
	if got := ask("a,b,c\n1,2,3\n4,5,6\n7,8,9"); got != `{"a":12,"b":15,"c":18}` {
		t.Errorf("second answer = %q", got)
	}
	if again, _ := st.GetSkill(t.Context(), "csv_sum"); again.Version != 2 || again.Container != sk.Container {
		t.Errorf("the second question rebuilt the skill: %+v", again)
	}
	log := servertest.Call[struct{ Events []domain.Event }](t, owner, "worker_log", map[string]any{"worker": "w-analyst"})
	var text strings.Builder
	for _, ev := range log.Events {
		text.WriteString(ev.Message.Subject + ": " + ev.Message.Body + "\n")
	}
	wantAll(t, "analyst's log", text.String(), "assistant: No skill sums CSV columns", "tool_result: error: ", "syntax error",
		"assistant: The build log shows a syntax error", `tool_result: {"output":{"q1":15,"q2":27}}`, `tool_result: {"output":{"a":12,"b":15,"c":18}}`)
	if n := strings.Count(text.String(), "No skill sums CSV columns"); n != 1 {
		t.Errorf("the analyst built the skill %d times; want once", n)
	}
}
