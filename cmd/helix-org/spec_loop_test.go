package main

import (
	"encoding/json"
	"io"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/agent/llm"
	"github.com/helixml/helix-org/agent/llm/llmtest"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/tools"
)

// loopTeam hires a planner and one builder with the grants the loop needs,
// on a server whose model is script.
func loopTeam(t *testing.T, script llmtest.Script) (*store.Store, *mcp.ClientSession) {
	t.Helper()
	fake := llmtest.New(t, llm.Anthropic, script)
	st := openTestStore(t)
	st.SetSetting(t.Context(), agent.RuntimeSetting, agent.RuntimeBuiltin)
	useFake(t, st, llm.Anthropic, fake)
	_, _, owner := startServe(t, st, io.Discard)
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"create_role", map[string]any{"id": "r-planner", "title": "Planner", "content": "Plan spec tasks; ask the reviewer when the prompt leaves a decision open."}},
		{"create_role", map[string]any{"id": "r-builder", "title": "Builder", "content": "Build items."}},
		{"create_position", map[string]any{"id": "p-planner", "role": "r-planner", "title": "Planner"}},
		{"create_position", map[string]any{"id": "p-builder", "role": "r-builder", "title": "Builder"}},
		{"hire_worker", map[string]any{"id": "w-planner", "position": "p-planner", "kind": "ai", "name": "Planner", "grants": []string{"submit_spec", "skip_item", "ask_human"}}},
		{"hire_worker", map[string]any{"id": "w-b1", "position": "p-builder", "kind": "ai", "name": "Builder", "grants": []string{"report_item"}}},
	} {
		servertest.Call[map[string]any](t, owner, c.tool, c.args)
	}
	return st, owner
}

// waitTaskEvent waits, on the store's change signal, for an event on a
// task's stream whose subject is want.
func waitTaskEvent(t *testing.T, st *store.Store, task, want string) domain.Event {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		changed := st.Changed()
		evs, err := st.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{domain.TaskStream(task)}})
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			if ev.Message.Subject == want {
				return ev
			}
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("no %q on %s's stream after 60s", want, task)
		}
	}
}

// TestSpecTaskClarifyingQuestion: the planner asks the reviewer instead of
// guessing; the task waits — its runs over, still in spec_generation —
// until the reviewer answers in the direct-message stream; the answer
// wakes the planner, whose spec follows it. Cancelled before any work,
// the session ends saying why it learned nothing.
func TestSpecTaskClarifyingQuestion(t *testing.T) {
	t.Parallel()
	const question, answer = "Should login use passkeys or passwords?", "Passkeys, with passwords as a fallback."
	st, owner := loopTeam(t, func(turn llmtest.Turn) llmtest.Reply {
		p := turn.Prompt()
		switch {
		case turn.CallsTo("ask_human") > 0 || turn.CallsTo("submit_spec") > 0:
			return llmtest.Reply{Text: "Done."}
		case strings.Contains(p, answer):
			return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("submit_spec", map[string]any{"task": "t-login",
				"design": "# Login\n\nThe reviewer said: " + answer + "\n", "items": []map[string]any{{"seq": 1, "title": "Passkey login",
					"delta": "adds /login; nothing exists yet", "framework": "net/http", "idioms": []string{"table tests"}, "budget": 30, "verify": "go test ./..."}}})}}
		case strings.Contains(p, "You plan spec task t-login"):
			return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("ask_human", map[string]any{"person": "w-owner", "question": question,
				"expectsReply": true, "task": "t-login"})}}
		}
		return llmtest.Reply{Text: "Nothing to do."}
	})
	servertest.Call[map[string]any](t, owner, "create_spec_task", map[string]any{"id": "t-login", "title": "Login", "prompt": "Add login.",
		"planner": "w-planner", "builders": []string{"w-b1"}})

	asked := waitTaskEvent(t, st, "t-login", "t-login: waiting for w-owner's answer")
	waitIdle(t, st)
	view, err := st.GetSpecTask(t.Context(), "t-login")
	if err != nil {
		t.Fatal(err)
	}
	var m struct{ Question string }
	json.Unmarshal(asked.Message.Extra, &m)
	if view.Task.State != domain.TaskSpecGeneration || view.Asking != m.Question || asked.Message.Body != question {
		t.Fatalf("with every run over the task is %s asking %q (event %q); want spec_generation waiting for %s", view.Task.State, view.Asking, asked.Message.Body, m.Question)
	}

	servertest.Call[map[string]any](t, owner, "dm", map[string]any{"to": "w-planner", "body": answer, "inReplyTo": m.Question})
	waitState(t, st, "t-login", domain.TaskSpecReview)
	waitTaskEvent(t, st, "t-login", "t-login: w-owner answered")
	view, _ = st.GetSpecTask(t.Context(), "t-login")
	if !strings.Contains(view.Docs.Design, answer) || view.Asking != "" {
		t.Errorf("design %q, asking %q; want the answer followed and nothing asked", view.Docs.Design, view.Asking)
	}
	if it := view.Items[0]; it.Delta != "adds /login; nothing exists yet" || it.Framework != "net/http" || it.Budget != 30 || len(it.Idioms) != 1 || it.Verify != "go test ./..." {
		t.Errorf("item 1 = %+v, want delta, framework, idioms, budget and verify", it)
	}

	servertest.Call[map[string]any](t, owner, "cancel_spec_task", map[string]any{"task": "t-login", "reason": "not now"})
	end := waitTaskEvent(t, st, "t-login", "t-login: nothing new")
	wantAll(t, "the session's end", end.Message.Body, "Nothing new learned from t-login: the task was cancelled, so no delivery was accepted to learn a pattern from")
}

var stalledItem = regexp.MustCompile(`Spec task t-([a-z]+) is stalled: item (\d+)`)

// TestSpecTaskStallEnds: a builder blocks every "flaky" item; the planner,
// asked about the stall, re-plans it, skips it, or re-plans it flaky
// again until the server aborts. Each way ends, each step an event on the
// task's stream.
func TestSpecTaskStallEnds(t *testing.T) {
	for _, tc := range []struct {
		task      string
		recover   func(task string, item int) llm.ToolCall
		wantState domain.TaskState
		want      []string
	}{
		{"replan", func(task string, item int) llm.ToolCall {
			return llmtest.Call("submit_spec", map[string]any{"task": task, "replace": item, "design": "# Migration\n", "items": []map[string]any{{"seq": 1, "title": "Stable migration"}}})
		}, domain.TaskImplementationReview, []string{"item 1 stalled", "item 1 replan"}},
		{"skip", func(task string, item int) llm.ToolCall {
			return llmtest.Call("skip_item", map[string]any{"task": task, "item": item, "reason": "the schema already has the column"})
		}, domain.TaskImplementationReview, []string{"item 1 stalled", "item 1 skip"}},
		{"abort", func(task string, item int) llm.ToolCall {
			return llmtest.Call("submit_spec", map[string]any{"task": task, "replace": item, "design": "# Migration\n", "items": []map[string]any{{"seq": 1, "title": "Flaky migration, again"}}})
		}, domain.TaskBlocked, []string{"item 1 stalled", "item 1 replan", "item 3 stalled", "item 3 replan", "item 4 stalled", "item 4 replan", "item 5 abort"}},
	} {
		t.Run(tc.task, func(t *testing.T) {
			t.Parallel()
			task := "t-" + tc.task
			st, owner := loopTeam(t, func(turn llmtest.Turn) llmtest.Reply {
				p := turn.Prompt()
				m, s := itemHandout.FindStringSubmatch(p), stalledItem.FindStringSubmatch(p)
				switch {
				case len(turn.Results()) > 0:
					return llmtest.Reply{Text: "Done."}
				case strings.Contains(p, "You plan spec task "+task):
					return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("submit_spec", map[string]any{"task": task, "design": "# Migration\n",
						"items": []map[string]any{{"seq": 1, "title": "Flaky migration"}, {"seq": 2, "title": "Handler", "blockedBy": []int{1}}}})}}
				case s != nil:
					item, _ := strconv.Atoi(s[2])
					return llmtest.Reply{ToolCalls: []llm.ToolCall{tc.recover(task, item)}}
				case m != nil:
					item, _ := strconv.Atoi(m[1])
					outcome := "delivered"
					if strings.Contains(m[3], "Flaky") {
						outcome = "blocked"
					}
					return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("report_item", map[string]any{"task": task, "item": item, "outcome": outcome,
						"summary": outcome + ": the migration's lock"})}}
				}
				return llmtest.Reply{Text: "Nothing to do."}
			})
			servertest.Call[map[string]any](t, owner, "create_spec_task", map[string]any{"id": task, "title": tc.task, "prompt": "Migrate.",
				"planner": "w-planner", "builders": []string{"w-b1"}})
			waitState(t, st, task, domain.TaskSpecReview)
			servertest.Call[map[string]any](t, owner, "review_spec", map[string]any{"task": task, "approve": true})
			waitState(t, st, task, tc.wantState)
			evs, err := st.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{domain.TaskStream(task)}})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, ev := range evs {
				var m struct{ Stall string }
				if json.Unmarshal(ev.Message.Extra, &m); m.Stall != "" {
					got = append(got, strings.TrimPrefix(ev.Message.Subject, task+": "))
				}
			}
			if strings.Join(got, ", ") != strings.Join(tc.want, ", ") {
				t.Errorf("stall events: %s\nwant:         %s", strings.Join(got, ", "), strings.Join(tc.want, ", "))
			}
		})
	}
}

// TestExplorersOnACheapModel: agent.by_role gives the explorers' role a
// cheap model and three turns. The explorer reads one area and wanders
// on without reporting: its run stops at the turn limit, its partition is
// recorded unknown, and the planner — on the default model — is woken with
// the exploration rather than kept waiting.
func TestExplorersOnACheapModel(t *testing.T) {
	t.Parallel()
	repo := greeterRepo(t)
	fake := llmtest.New(t, llm.Anthropic, func(turn llmtest.Turn) llmtest.Reply {
		p := turn.Prompt()
		switch {
		case strings.Contains(p, "You explore part 1"):
			return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("get_spec_task", map[string]any{"task": "t-greeter"})}}
		case strings.Contains(p, "You plan spec task t-greeter") && turn.CallsTo("submit_spec") == 0:
			return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("submit_spec", map[string]any{"task": "t-greeter", "design": "# Greeter\n",
				"items": []map[string]any{{"seq": 1, "title": "Greet by name"}}})}}
		}
		return llmtest.Reply{Text: "Done."}
	})
	st := openTestStore(t)
	ctx := t.Context()
	st.SetSetting(ctx, agent.RuntimeSetting, agent.RuntimeBuiltin)
	useFake(t, st, llm.Anthropic, fake)
	st.SetSetting(ctx, tools.SpecRepoRootsSetting, filepath.Dir(repo))
	if err := st.SetSetting(ctx, agent.ByRoleSetting, `{"r-explorer":{"model":"cheap-model","max_turns":3}}`); err != nil {
		t.Fatal(err)
	}
	_, _, owner := startServe(t, st, io.Discard)
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"create_role", map[string]any{"id": "r-planner", "title": "Planner", "content": "Plan spec tasks."}},
		{"create_role", map[string]any{"id": "r-explorer", "title": "Explorer", "content": "Explore a partition of a repository; report it."}},
		{"create_position", map[string]any{"id": "p-planner", "role": "r-planner", "title": "Planner"}},
		{"create_position", map[string]any{"id": "p-explorer", "role": "r-explorer", "title": "Explorer"}},
		{"hire_worker", map[string]any{"id": "w-planner", "position": "p-planner", "kind": "ai", "name": "Planner", "grants": []string{"submit_spec"}}},
		{"hire_worker", map[string]any{"id": "w-scout", "position": "p-explorer", "kind": "ai", "name": "Scout", "grants": []string{"get_spec_task", "report_exploration"}}},
		{"create_spec_task", map[string]any{"id": "t-greeter", "title": "Greeter", "prompt": "Greet by name.", "repo": repo, "planner": "w-planner",
			"builders": []string{"w-planner"}, "explorers": []string{"w-scout"}}},
	} {
		servertest.Call[map[string]any](t, owner, c.tool, c.args)
	}
	waitState(t, st, "t-greeter", domain.TaskSpecReview)

	view, err := st.GetSpecTask(ctx, "t-greeter")
	if err != nil {
		t.Fatal(err)
	}
	if p := view.Exploration[0]; p.State != domain.ExploreUnreported || len(p.Unknown) != 1 || !strings.Contains(p.Summary, "stopped after 3 model turns") {
		t.Errorf("the explorer's partition = %+v, want unreported after 3 turns, every area unknown", p)
	}
	models := map[string][]string{}
	for _, turn := range fake.Turns() {
		switch p := turn.Prompt(); {
		case strings.Contains(p, "You explore part 1"):
			models["explorer"] = append(models["explorer"], turn.Model)
		case strings.Contains(p, "You plan spec task"):
			models["planner"] = append(models["planner"], turn.Model)
		}
	}
	if got := models["explorer"]; len(got) != 3 || got[0] != "cheap-model" || got[2] != "cheap-model" {
		t.Errorf("the explorer's turns ran on %v, want 3 on cheap-model", got)
	}
	if got := models["planner"]; len(got) == 0 || got[0] == "cheap-model" {
		t.Errorf("the planner's turns ran on %v, want the default model", got)
	}
}
