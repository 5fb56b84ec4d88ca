package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/helixml/helix-org/agent/llm"
	"github.com/helixml/helix-org/agent/llm/llmtest"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/server/ui/uitest"
)

// gatedBuilder plays a builder that works through its task list one item
// at a time: on item N it waits for an event on s-go-N, then reports the
// item delivered. Everyone else has nothing to do.
func gatedBuilder(t llmtest.Turn) llmtest.Reply {
	m := handout.FindStringSubmatch(t.Prompt())
	switch {
	case m == nil || t.CallsTo("report_item") > 0:
		return llmtest.Reply{Text: "Nothing to do."}
	case t.CallsTo("read_events") > 0:
		var item int
		fmt.Sscan(m[1], &item)
		return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("report_item", map[string]any{"task": m[2], "item": item, "outcome": "delivered", "summary": "built item " + m[1]})}}
	}
	return llmtest.Reply{Text: "Waiting for the go.", ToolCalls: []llm.ToolCall{llmtest.Call("read_events", map[string]any{"streams": []string{"s-go-" + m[1]}, "wait": 60})}}
}

// TestWebUIFleetTaskList: the fleet page, open before the work starts,
// shows a scripted builder on item 1 of its task list; when the builder
// reports it and moves on, the page — not reloaded — shows item 2 as the
// current one, item 1 done and faded, and item 3 next.
func TestWebUIFleetTaskList(t *testing.T) {
	t.Parallel()
	o := newWebOrg(t, gatedBuilder)
	call := func(tool string, args map[string]any) { servertest.Call[map[string]any](t, o.owner, tool, args) }
	call("create_role", map[string]any{"id": "r-dev", "title": "Dev", "content": "Build the item you are given."})
	call("create_position", map[string]any{"id": "p-dev", "role": "r-dev", "title": "Dev"})
	call("hire_worker", map[string]any{"id": "w-plan", "position": "p-dev", "kind": "ai", "name": "Planner"})
	call("hire_worker", map[string]any{"id": "w-b1", "position": "p-dev", "kind": "ai", "name": "Builder", "grants": []string{"read_events", "report_item"}})
	for n := 1; n <= 3; n++ {
		call("create_stream", map[string]any{"id": fmt.Sprintf("s-go-%d", n), "name": fmt.Sprintf("go %d", n)})
		call("subscribe", map[string]any{"stream": fmt.Sprintf("s-go-%d", n), "worker": "w-b1"}) // it reads what it waits on
	}
	call("create_spec_task", map[string]any{"id": "t-login", "title": "Login", "prompt": "Add a login.", "planner": "w-plan", "builders": []string{"w-b1"}})
	items := []domain.TaskItem{{Seq: 1, Title: "Schema"}, {Seq: 2, Title: "Handler", BlockedBy: []int{1}}, {Seq: 3, Title: "Page", BlockedBy: []int{2}}}
	if _, err := o.st.SubmitSpec(t.Context(), "w-plan", "t-login", "# Login", items, 0); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, o.st)

	tab := o.signIn(t)
	uitest.Do(t, tab, chromedp.Navigate(o.base+"/ui/fleet"), chromedp.WaitVisible(chromedp.CSS(`#live-status[data-state="live"]`)),
		chromedp.Evaluate[chromedp.Void](`window.notReloaded = true`))
	type list struct{ Done, Current, Next []string }
	read := func() list {
		return uitest.Run(t, tab, chromedp.Evaluate[list](`(() => {
			const texts = sel => [...document.querySelectorAll("#run-w-b1 ol.task " + sel)].map(e => e.textContent.trim());
			return {Done: texts("li.done"), Current: texts("li.current"), Next: texts("li:not(.done):not(.current)")};
		})()`))
	}
	wait := func(what string, ok func(list) bool) list {
		t.Helper()
		var got list
		pollUntil(t, what, 30*time.Second, func() bool { got = read(); return ok(got) })
		if !uitest.Run(t, tab, chromedp.Evaluate[bool](`window.notReloaded === true`)) {
			t.Fatal("the fleet page reloaded; it must move live")
		}
		return got
	}
	current := func(title string) func(list) bool {
		return func(l list) bool { return len(l.Current) == 1 && strings.HasPrefix(l.Current[0], title+" (") }
	}

	call("review_spec", map[string]any{"task": "t-login", "approve": true})
	got := wait("item 1 current on the fleet page", current("1. Schema"))
	if len(got.Done) != 0 || strings.Join(got.Next, ",") != "2. Handler" {
		t.Errorf("on item 1: %+v, want nothing done and 2. Handler next", got)
	}
	uitest.Screenshot(t, tab, "fleet-task-item-1")

	call("publish", map[string]any{"stream": "s-go-1", "body": "go"})
	got = wait("item 2 current on the fleet page", current("2. Handler"))
	if strings.Join(got.Done, ",") != "1. Schema" || strings.Join(got.Next, ",") != "3. Page" {
		t.Errorf("on item 2: %+v, want 1. Schema done and 3. Page next", got)
	}
	if faded := uitest.Run(t, tab, chromedp.Evaluate[string](`getComputedStyle(document.querySelector("#run-w-b1 ol.task li.done")).textDecorationLine`)); faded != "line-through" {
		t.Errorf("the done item is drawn %q, want it struck through", faded)
	}
	uitest.Screenshot(t, tab, "fleet-task-item-2")

	for _, s := range []string{"s-go-2", "s-go-3"} {
		call("publish", map[string]any{"stream": s, "body": "go"})
	}
	waitIdle(t, o.st)
}
