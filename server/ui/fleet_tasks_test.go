package ui_test

import (
	"strings"
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
)

// TestFleetShowsSpecTaskItem: a running builder's card names its spec
// task, its item with the elapsed time, and the items around it.
func TestFleetShowsSpecTaskItem(t *testing.T) {
	t.Parallel()
	o := newOrg(t)
	ctx := t.Context()
	o.call(t, "create_role", map[string]any{"id": "r-dev", "title": "Dev", "content": "Build."})
	o.call(t, "create_position", map[string]any{"id": "p-dev", "role": "r-dev", "title": "Dev"})
	for _, id := range []string{"w-plan", "w-b1"} {
		o.call(t, "hire_worker", map[string]any{"id": id, "position": "p-dev", "kind": "ai", "name": id})
	}
	o.call(t, "create_spec_task", map[string]any{"id": "t-login", "title": "Login", "prompt": "p", "planner": "w-plan", "builders": []string{"w-b1"}})
	items := []domain.TaskItem{{Seq: 1, Title: "Schema"}, {Seq: 2, Title: "Handler"}, {Seq: 3, Title: "Page", BlockedBy: []int{2}}}
	if _, err := o.h.Store.SubmitSpec(ctx, "w-plan", "t-login", "d", items, 0); err != nil {
		t.Fatal(err)
	}
	o.call(t, "review_spec", map[string]any{"task": "t-login", "approve": true})
	if _, _, _, err := o.h.Store.Claim(ctx, "w-b1", "act-1", time.Hour); err != nil {
		t.Fatal(err)
	}
	code, body := o.client(t, "w-owner").get(t, "/ui/fleet")
	i := strings.Index(body, `id="run-w-b1"`)
	if code != 200 || i < 0 {
		t.Fatalf("GET /ui/fleet = %d without w-b1's run:\n%s", code, body)
	}
	card := body[i:]
	card = card[:strings.Index(card, "</article>")]
	for _, want := range []string{`<a href="/ui/tasks/t-login">Login</a> <code class="id">t-login</code>`, `<li class="current">1. Schema (`, "<li>2. Handler</li>"} {
		if !strings.Contains(card, want) {
			t.Errorf("w-b1's card lacks %q:\n%s", want, card)
		}
	}
}
