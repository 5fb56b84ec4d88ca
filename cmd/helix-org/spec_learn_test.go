package main

import (
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/agent/llm"
	"github.com/helixml/helix-org/agent/llm/llmtest"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server/servertest"
)

const sandboxErr = "payments_test.go:42: PAYMENTS_SANDBOX_KEY is not set"

var itemHandout = regexp.MustCompile(`You build item (\d+) of spec task (t-[a-z0-9-]+), "[^"]*": ([^\n]*)`)

// learningTeam plays the planner of two payments tasks and a builder
// that blocks on any item its prompt gives no constraint for, unless the
// item itself says to export the key; with a constraint it cites it.
func learningTeam(turn llmtest.Turn) llmtest.Reply {
	p := turn.Prompt()
	submit := func(task string, replace int, items ...map[string]any) llmtest.Reply {
		return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("submit_spec", map[string]any{"task": task, "design": "# Payments\n", "replace": replace, "items": items})}}
	}
	item := func(title, desc string) map[string]any {
		return map[string]any{"seq": 1, "title": title, "description": desc, "files": []string{"payments.go", "payments_test.go"}, "verify": "go test ./payments"}
	}
	m := itemHandout.FindStringSubmatch(p)
	c := constraintID.FindStringSubmatch(p)
	switch {
	case turn.CallsTo("submit_spec") > 0 || turn.CallsTo("report_item") > 0:
		return llmtest.Reply{Text: "Done."}
	case strings.Contains(p, "You plan spec task t-refund"):
		return submit("t-refund", 0, item("Refund endpoint", "Refund a payment through the payments sandbox API"))
	case strings.Contains(p, "You plan spec task t-invoice"):
		return submit("t-invoice", 0, item("Invoice endpoint", "Invoice a payment through the payments sandbox API"))
	case strings.Contains(p, "Spec task t-refund is stalled"):
		return submit("t-refund", 1, item("Refund endpoint, key exported", "Refund a payment; export PAYMENTS_SANDBOX_KEY first"))
	case m == nil:
		return llmtest.Reply{Text: "Nothing to do."}
	case c != nil && turn.CallsTo("insight_feedback") == 0:
		return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("insight_feedback", map[string]any{"ids": []string{c[1]}, "outcome": "utilized"})}}
	}
	report := func(outcome, summary string) llmtest.Reply {
		seq, _ := strconv.Atoi(m[1])
		return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("report_item", map[string]any{"task": m[2], "item": seq, "outcome": outcome, "summary": summary})}}
	}
	switch {
	case c != nil:
		return report("delivered", "built, following "+c[1])
	case strings.Contains(m[3], "key exported"):
		return report("delivered", "exported PAYMENTS_SANDBOX_KEY from the vault, then the tests passed")
	}
	return report("blocked", sandboxErr)
}

// TestSpecTaskLearnsFromABlockedItem: the builder blocks on an item; the
// planner re-plans it and the task reaches done; the server's learn step
// asks the reviewer about the blocked item in its inbox, quoting the
// error, the files and what got it done; the answer becomes an insight
// tagged user-provided; the next task's similar item carries it as a
// constraint (and the failure the server stored as a risk), and the
// builder cites it.
func TestSpecTaskLearnsFromABlockedItem(t *testing.T) {
	t.Parallel()
	fake := llmtest.New(t, llm.Anthropic, learningTeam)
	st := openTestStore(t)
	st.SetSetting(t.Context(), agent.RuntimeSetting, agent.RuntimeBuiltin)
	useFake(t, st, llm.Anthropic, fake)
	_, _, owner := startServe(t, st, io.Discard)
	call := func(name string, args map[string]any) map[string]any {
		return servertest.Call[map[string]any](t, owner, name, args)
	}
	call("create_role", map[string]any{"id": "r-planner", "title": "Planner", "content": "Plan spec tasks."})
	call("create_role", map[string]any{"id": "r-builder", "title": "Builder", "content": "Build items."})
	call("create_position", map[string]any{"id": "p-planner", "role": "r-planner", "title": "Planner"})
	call("create_position", map[string]any{"id": "p-builder", "role": "r-builder", "title": "Builder"})
	call("hire_worker", map[string]any{"id": "w-planner", "position": "p-planner", "kind": "ai", "name": "Planner", "grants": []string{"submit_spec"}})
	call("hire_worker", map[string]any{"id": "w-b1", "position": "p-builder", "kind": "ai", "name": "Builder", "grants": []string{"report_item", "insight_feedback"}})
	task := func(id, prompt string) {
		call("create_spec_task", map[string]any{"id": id, "title": id, "prompt": prompt, "planner": "w-planner", "builders": []string{"w-b1"}})
		waitState(t, st, id, domain.TaskSpecReview)
		call("review_spec", map[string]any{"task": id, "approve": true})
		waitState(t, st, id, domain.TaskImplementationReview)
		call("review_spec", map[string]any{"task": id, "approve": true})
	}

	task("t-refund", "Add a refund endpoint.")
	inbox := servertest.Call[struct{ Events []domain.Event }](t, owner, "read_events", map[string]any{"streams": []string{domain.InboxStream("w-owner")}}).Events
	q := inbox[len(inbox)-1].Message
	if !strings.HasPrefix(q.Subject, "What should builders do next time? (t-refund item 1, q-") {
		t.Fatalf("the newest notice in the reviewer's inbox is %q, not the learn question", q.Subject)
	}
	qid := q.Subject[strings.LastIndex(q.Subject, " ")+1 : len(q.Subject)-1]
	wantAll(t, "question", q.Body, "Item 1 (Refund endpoint) was blocked: "+sandboxErr, "Files: payments.go, payments_test.go", "Verify: go test ./payments",
		"- item 2 (Refund endpoint, key exported) was delivered by w-b1: exported PAYMENTS_SANDBOX_KEY from the vault, then the tests passed",
		`store_insight {"question": "`+qid+`"`)

	answer := servertest.Call[struct{ Insight struct{ ID string } }](t, owner, "store_insight", map[string]any{"question": qid,
		"resolution": "export PAYMENTS_SANDBOX_KEY from the vault before running the payments tests", "type": "pattern"}).Insight
	in, err := st.GetInsight(t.Context(), answer.ID)
	if err != nil || in.Tags[0] != domain.TagUserProvided || in.Target != "r-builder" {
		t.Fatalf("the answer: %+v, %v; want user-provided for r-builder", in, err)
	}

	task("t-invoice", "Add an invoice endpoint.")
	view, err := st.GetSpecTask(t.Context(), "t-invoice")
	if err != nil {
		t.Fatal(err)
	}
	if view.Task.State != domain.TaskDone || len(view.Items) != 1 || view.Items[0].Summary != "built, following "+answer.ID {
		t.Errorf("t-invoice: %s, items %+v; want done, its one item built following %s", view.Task.State, view.Items, answer.ID)
	}
	var prompt string
	for _, turn := range fake.Turns() {
		if strings.Contains(turn.Prompt(), "You build item 1 of spec task t-invoice") {
			prompt = turn.Prompt()
		}
	}
	wantAll(t, "the invoice item's prompt", prompt, "- "+answer.ID+" (effectiveness 0.94): when Refund endpoint. Refund a payment through the payments sandbox API → export PAYMENTS_SANDBOX_KEY",
		"Risks (advice that failed, or known failures; avoid them):\n- i-", "→ It blocked: "+sandboxErr+"; item 2 (Refund endpoint, key exported) then delivered: ")
	if in, _ := st.GetInsight(t.Context(), answer.ID); in.Stats.Utilized != 1 || in.Stats.Helped != 1 {
		t.Errorf("the answer after the run that used it: %+v", in.Stats)
	}
	if qs := servertest.Call[struct{ Questions []any }](t, owner, "learn", map[string]any{"task": "t-invoice"}).Questions; len(qs) != 0 {
		t.Errorf("a task with nothing blocked asked %v", qs)
	}
	// The accepted delivery of t-invoice proposes what worked, quarantined
	// until the reviewer confirms it; t-refund's replacement item was the
	// question's answer instead.
	proposed := servertest.Call[struct {
		Insights []struct {
			ID, Type, Resolution, Origin string
			Untrusted                    bool
		}
	}](t, owner, "list_insights", map[string]any{"tag": "proposed"}).Insights
	if len(proposed) != 1 || proposed[0].Type != "pattern" || !proposed[0].Untrusted || proposed[0].Resolution != "What worked: built, following "+answer.ID+
		" Verified with: go test ./payments." || !strings.Contains(proposed[0].Origin, "proposed by the learn step of t-invoice from item 1") {
		t.Errorf("proposed patterns: %+v, want t-invoice item 1's", proposed)
	}
	for task, want := range map[string]string{"t-refund": "t-refund: learned 1 insights", "t-invoice": "t-invoice: learned 1 insights"} {
		evs := servertest.Call[struct{ Events []domain.Event }](t, owner, "read_events", map[string]any{"streams": []string{domain.TaskStream(task)}}).Events
		if got := evs[len(evs)-1].Message.Subject; got != want {
			t.Errorf("%s's stream ends with %q, want %q", task, got, want)
		}
	}
}
