package ui_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
)

// taskTeam hires a planner and two builders below the owner, Maya (a
// person with no spec-task grants) and Sam (a person who holds the
// spec-task tools but reviews nothing), and gives the planner its tool.
func taskTeam(t *testing.T, o *org) {
	t.Helper()
	withMaya(t, o)
	o.call(t, "create_role", map[string]any{"id": "r-dev", "title": "Dev", "content": "Build."})
	o.call(t, "create_position", map[string]any{"id": "p-dev", "role": "r-dev", "title": "Dev"})
	o.call(t, "hire_worker", map[string]any{"id": "w-plan", "position": "p-dev", "kind": "ai", "name": "Planner", "grants": []string{"submit_spec"}})
	for _, id := range []string{"w-b1", "w-b2"} {
		o.call(t, "hire_worker", map[string]any{"id": id, "position": "p-dev", "kind": "ai", "name": "Builder " + id[3:], "grants": []string{"claim_item", "report_item"}})
	}
	o.call(t, "hire_worker", map[string]any{"id": "w-sam", "position": "p-staff", "kind": "human", "name": "Sam",
		"grants": []string{"list_spec_tasks", "get_spec_task", "review_spec", "list_workers"}})
}

// submitSpec sends a design and three items as the planner, over MCP.
func submitSpec(t *testing.T, o *org, task string) {
	t.Helper()
	planner := o.h.Connect(t, "w-plan", servertest.Token(t, o.h.Store, "w-plan"))
	servertest.Call[map[string]any](t, planner, "submit_spec", map[string]any{"task": task, "design": "# Login\n\nSessions in a **cookie**.",
		"items": []map[string]any{{"seq": 1, "title": "Schema"}, {"seq": 2, "title": "Handler"}, {"seq": 3, "title": "Page", "blockedBy": []int{1, 2}}}})
}

// TestTaskForms: the Tasks page's forms call the tools as the person —
// starting a task, reviewing its spec — and a refusal is shown on the
// page it came from, with its status, the field named and what was typed
// kept.
func TestTaskForms(t *testing.T) {
	t.Parallel()
	o := newOrg(t)
	taskTeam(t, o)
	owner := o.client(t, "w-owner")
	post := func(c *client, tool string, form url.Values) (int, string) {
		form.Set("csrf", c.csrf)
		return c.post(t, "/ui/act/"+tool, form, nil)
	}

	// No builder ticked: the page posts only its hidden empty builders[].
	code, body := post(owner, "create_spec_task", url.Values{"title": {"Login"}, "prompt": {"Add a login."}, "planner": {"w-plan"},
		"builders[]": {""}, "next": {"/ui/tasks/{id}"}, "back": {"/ui/tasks"}})
	if code != http.StatusBadRequest || !strings.Contains(body, `role="alert">Builders: choose at least one</div>`) || !strings.Contains(body, `value="Login"`) {
		t.Errorf("start without builders = %d, want 400 naming builders with the title kept:\n%s", code, body)
	}
	code, _ = post(owner, "create_spec_task", url.Values{"title": {"Login"}, "prompt": {"Add a login."}, "planner": {"w-plan"},
		"builders[]": {"w-b1", "w-b2"}, "priority:json": {"3"}, "next": {"/ui/tasks/{id}"}, "back": {"/ui/tasks"}})
	if code != http.StatusSeeOther || owner.location != "/ui/tasks/t-login" {
		t.Fatalf("start = %d to %q, want 303 to /ui/tasks/t-login", code, owner.location)
	}
	_, body = owner.get(t, "/ui/tasks")
	for _, want := range []string{`<a href="/ui/tasks/t-login">Login</a>`, "spec_generation", `<td data-label="Priority">3</td>`} {
		if !strings.Contains(body, want) {
			t.Errorf("the task list lacks %q", want)
		}
	}
	_, body = owner.get(t, "/ui/tasks/t-login")
	if !strings.Contains(body, "Not written yet") || strings.Contains(body, `action="/ui/act/review_spec"`) {
		t.Errorf("a task in spec generation: want the design awaited and no review form")
	}

	submitSpec(t, o, "t-login")
	_, body = owner.get(t, "/ui/tasks/t-login")
	for _, want := range []string{"<h2>Review the spec</h2>", `action="/ui/act/review_spec"`, "Sessions in a <strong>cookie</strong>.", `id="item-3"`} {
		if !strings.Contains(body, want) {
			t.Errorf("the task in spec review lacks %q", want)
		}
	}
	code, body = post(owner, "review_spec", url.Values{"task": {"t-login"}, "approve:bool": {"false"}, "next": {"/ui/tasks/t-login"}, "back": {"/ui/tasks/t-login"}})
	if code != http.StatusBadRequest || !strings.Contains(body, "review_spec: review spec of t-login: comments: say what to change") {
		t.Errorf("changes without comments = %d, want 400 saying comments are needed:\n%s", code, body)
	}
	sam := o.client(t, "w-sam")
	code, _ = post(sam, "review_spec", url.Values{"task": {"t-login"}, "approve:bool": {"true"}, "next": {"/ui/tasks/t-login"}, "back": {"/ui/tasks/t-login"}})
	if code != http.StatusForbidden {
		t.Errorf("Sam, not the reviewer, approving = %d, want 403", code)
	}
	if _, body := sam.get(t, "/ui/tasks/t-login"); strings.Contains(body, `action="/ui/act/review_spec"`) || !strings.Contains(body, "Waiting for") {
		t.Errorf("Sam sees the review form, or not who it waits for")
	}

	code, _ = post(owner, "review_spec", url.Values{"task": {"t-login"}, "approve:bool": {"true"}, "comments": {"Go."}, "next": {"/ui/tasks/t-login"}, "back": {"/ui/tasks/t-login"}})
	if code != http.StatusSeeOther {
		t.Fatalf("approve = %d, want 303", code)
	}
	_, body = owner.get(t, "/ui/tasks/t-login")
	for col, want := range map[domain.ItemState][]string{"in_progress": {`id="item-1"`, `id="item-2"`, "Builder 1", "Builder 2"}, "pending": {`id="item-3"`, "after 1, 2"}} {
		for _, w := range want {
			if !strings.Contains(column(t, body, col), w) {
				t.Errorf("column %s lacks %q", col, w)
			}
		}
	}
	if strings.Contains(body, "<h2>Review") {
		t.Errorf("a task in implementation still asks for a review")
	}
}

// column is the HTML of one column of a task's board.
func column(t *testing.T, page string, state domain.ItemState) string {
	t.Helper()
	i := strings.Index(page, `data-state="`+string(state)+`"`)
	if i < 0 {
		t.Fatalf("the board has no %s column", state)
	}
	rest := page[i:]
	if j := strings.Index(rest, "</section>"); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

// TestTaskPagesRefuse: a person without the spec-task tools is told which
// one they lack; a task that does not exist is a 404 naming it.
func TestTaskPagesRefuse(t *testing.T) {
	t.Parallel()
	o := newOrg(t)
	taskTeam(t, o)
	maya := o.client(t, "w-maya")
	tests := []struct {
		name     string
		c        *client
		path     string
		wantCode int
		want     string
	}{
		{"list without list_spec_tasks", maya, "/ui/tasks", 200, `missing grant: worker w-maya does not hold grant &#34;list_spec_tasks&#34;`},
		{"task without get_spec_task", maya, "/ui/tasks/t-none", 403, `missing grant: worker w-maya does not hold grant &#34;get_spec_task&#34;`},
		{"no such task", o.client(t, "w-owner"), "/ui/tasks/t-none", 404, `spec task &#34;t-none&#34;: not found`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := tt.c.get(t, tt.path)
			if code != tt.wantCode || !strings.Contains(body, tt.want) {
				t.Errorf("GET %s = %d, want %d with %q:\n%s", tt.path, code, tt.wantCode, tt.want, body)
			}
		})
	}
	if _, body := maya.get(t, "/ui/tasks"); strings.Contains(body, `action="/ui/act/create_spec_task"`) {
		t.Errorf("Maya, without create_spec_task, is offered the form")
	}
}

// TestTaskPageShowsExploration: a task exploring its repository shows
// each explorer's partition, what it read and what is unknown.
func TestTaskPageShowsExploration(t *testing.T) {
	t.Parallel()
	o := newOrg(t)
	taskTeam(t, o)
	ctx := t.Context()
	parts := domain.PartitionRepo([]string{"api/a.go", "api/b.go", "web/index.html"}, []string{"w-b1", "w-b2"}, 10)
	if _, err := o.h.Store.StartSpecTask(ctx, "w-owner", domain.SpecTask{ID: "t-x", Title: "X", Prompt: "x", Repo: "/srv/x", Planner: "w-plan",
		Builders: []string{"w-b1", "w-b2"}}, store.TaskStart{Parts: parts}); err != nil {
		t.Fatal(err)
	}
	if _, err := o.h.Store.ReportExploration(ctx, "w-b1", "t-x", 1, "api/ is a **net/http** server", []string{"api"}); err != nil {
		t.Fatal(err)
	}
	_, body := o.client(t, "w-owner").get(t, "/ui/tasks/t-x")
	for _, want := range []string{`id="exploration"`, "<td>reported</td><td><code>api</code></td><td>—</td>", "<strong>net/http</strong>",
		"<code>web</code> <span class=\"muted\">(1 files)</span></td><td>open</td><td>—</td><td>—</td>"} {
		if !strings.Contains(body, want) {
			t.Errorf("the task page lacks %q", want)
		}
	}
}
