package tools

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// items reads a task's items as the tables compare them.
func items(t *testing.T, f fixture, task string) []itemOut {
	t.Helper()
	view := mustCall[store.SpecTaskView](t, f.env, "get_spec_task", map[string]any{"task": task})
	var out []itemOut
	for _, it := range view.Items {
		out = append(out, itemOut{Seq: it.Seq, State: string(it.State), Worker: it.Worker})
	}
	return out
}

func report(t *testing.T, f fixture, worker string, item int, outcome, summary string) {
	t.Helper()
	mustCall[any](t, f.as(worker), "report_item", map[string]any{"task": "t-login", "item": item, "outcome": outcome, "summary": summary})
}

func TestReportItem(t *testing.T) {
	repo := gitRepo(t)
	args := func(item int, outcome, summary string) map[string]any {
		return map[string]any{"task": "t-login", "item": item, "outcome": outcome, "summary": summary}
	}
	runTable(t, "report_item", []toolCase[itemOut]{
		{
			name:  "delivered: the next ready item goes to the free builder with what its blocker delivered",
			setup: withApproved, caller: "w-b1", args: args(1, "delivered", "users table with bcrypt hashes"),
			want: itemOut{Seq: 1, State: "done", Worker: "w-b1"},
			check: func(t *testing.T, f fixture, _ itemOut) {
				want := []itemOut{{1, "done", "w-b1"}, {2, "in_progress", "w-b2"}, {3, "in_progress", "w-b1"}, {4, "pending", ""}}
				if diff := cmp.Diff(want, items(t, f, "t-login")); diff != "" {
					t.Errorf("items (-want +got):\n%s", diff)
				}
				evs, _ := f.env.Store.ReadEvents(t.Context(), storeQuery(domain.InboxStream("w-b1")))
				if body := evs[len(evs)-1].Message.Body; !strings.Contains(body, "Item 1 (Users table) delivered: users table with bcrypt hashes") {
					t.Errorf("handout of item 3:\n%s", body)
				}
			},
		},
		{
			name:  "partial: the rest is a new item that the dependents wait for too",
			setup: withApproved, caller: "w-b1",
			args: map[string]any{"task": "t-login", "item": 1, "outcome": "partial", "summary": "table made", "rest": "add the index"},
			want: itemOut{Seq: 1, State: "done", Worker: "w-b1"},
			check: func(t *testing.T, f fixture, _ itemOut) {
				view := mustCall[store.SpecTaskView](t, f.env, "get_spec_task", map[string]any{"task": "t-login"})
				if it := view.Items[4]; it.Seq != 5 || it.Title != "Rest of Users table" || it.State != domain.ItemInProgress || it.Worker != "w-b1" {
					t.Errorf("rest item = %+v", it)
				}
				if it := view.Items[2]; !cmp.Equal(it.BlockedBy, []int{1, 5}) || it.State != domain.ItemPending {
					t.Errorf("item 3 = %+v, want pending after 1 and 5", it)
				}
			},
		},
		{
			name:  "blocked while others work: nothing stalls",
			setup: withApproved, caller: "w-b1", args: args(1, "blocked", "no database driver"),
			want: itemOut{Seq: 1, State: "blocked", Worker: "w-b1"},
			check: func(t *testing.T, f fixture, _ itemOut) {
				if got := inboxSubjects(t, f, "w-echo"); len(got) != 1 {
					t.Errorf("planner inbox = %q, want only the first notice", got)
				}
			},
		},
		{
			name: "stalled: the planner is asked to re-plan the blocked item",
			setup: func(t *testing.T, f fixture) {
				withApproved(t, f)
				report(t, f, "w-b1", 1, "blocked", "no database driver")
			},
			caller: "w-b2", args: args(2, "delivered", "page done"),
			want: itemOut{Seq: 2, State: "done", Worker: "w-b2"},
			check: func(t *testing.T, f fixture, _ itemOut) {
				got := inboxSubjects(t, f, "w-echo")
				if got[len(got)-1] != "Spec task t-login: re-plan a blocked item" {
					t.Errorf("planner inbox = %q", got)
				}
			},
		},
		{
			name: "with a repository: progress.md and a session note are committed; ticks committed by agents are read",
			setup: func(t *testing.T, f fixture) {
				withBuilders(t, f)
				mustCall[any](t, f.env, "create_spec_task", taskArgs(repo))
				mustCall[any](t, f.as("w-echo"), "submit_spec", map[string]any{"task": "t-login", "design": "d", "items": loginItems})
				mustCall[any](t, f.env, "review_spec", map[string]any{"task": "t-login", "approve": true})
				tickInWorktree(t, repo, "t-login", "- [~] 2. Login page @w-b2", "- [x] 2. Login page")
			},
			caller: "w-b1", args: args(1, "delivered", "table"),
			want: itemOut{Seq: 1, State: "done", Worker: "w-b1"},
			check: func(t *testing.T, f fixture, _ itemOut) {
				progress := gitShow(t, repo, "t-login/progress.md")
				for _, want := range []string{"- [x] 1. Users table @w-b1", "- [x] 2. Login page @w-b2", "- [~] 3. Session handler (after 1) @w-b1",
					"- [ ] 4. Wire up (after 2, 3)\n", "marked done in a commit of progress.md"} {
					if !strings.Contains(progress, want) {
						t.Errorf("progress.md lacks %q:\n%s", want, progress)
					}
				}
				if note := gitShow(t, repo, "t-login/sessions/1-w-b1.md"); !strings.Contains(note, "delivered by w-b1") {
					t.Errorf("session note = %q", note)
				}
			},
		},
		{
			name:  "a builder freed on one task takes another's ready item",
			setup: withBusyB2, caller: "w-b2",
			args: map[string]any{"task": "t-other", "item": 1, "outcome": "delivered", "summary": "x done"},
			want: itemOut{Seq: 1, State: "done", Worker: "w-b2"},
			check: func(t *testing.T, f fixture, _ itemOut) {
				want := []itemOut{{1, "in_progress", "w-b1"}, {2, "in_progress", "w-b2"}, {3, "pending", ""}, {4, "pending", ""}}
				if diff := cmp.Diff(want, items(t, f, "t-login")); diff != "" {
					t.Errorf("t-login items (-want +got):\n%s", diff)
				}
			},
		},
		{name: "not your item", setup: withApproved, caller: "w-b2", args: args(1, "delivered", "x"),
			wantErr: []string{`item t-login/1 is in_progress with "w-b1", not in progress with w-b2`}, wantIs: domain.ErrConflict},
		{name: "unknown item", setup: withApproved, caller: "w-b1", args: args(9, "delivered", "x"),
			wantErr: []string{`item "t-login/9": not found`}, wantIs: domain.ErrNotFound},
		{name: "unknown task", caller: "w-b1", args: map[string]any{"task": "t-nope", "item": 1, "outcome": "delivered", "summary": "x"},
			wantErr: []string{`spec task "t-nope": not found`}, wantIs: domain.ErrNotFound},
		{name: "bad outcome", setup: withApproved, caller: "w-b1", args: args(1, "finished", "x"),
			wantErr: []string{"outcome"}, wantIs: domain.ErrInvalid},
		{name: "partial needs the rest", setup: withApproved, caller: "w-b1", args: args(1, "partial", "half"),
			wantErr: []string{"rest: say what remains"}, wantIs: domain.ErrInvalid},
		{name: "summary required", setup: withApproved, caller: "w-b1", args: args(1, "delivered", ""),
			wantErr: []string{"summary: is required"}, wantIs: domain.ErrInvalid},
	})
}

// TestStalledTaskAsksTheReviewer: a builder that always reports blocked
// gets the planner three re-plans of that line of work, then the reviewer
// is asked and the task is blocked: a question, not a loop.
func TestStalledTaskAsksTheReviewer(t *testing.T) {
	f := newFixture(t)
	withBuilders(t, f)
	a := taskArgs("")
	a["builders"] = []string{"w-b1"}
	mustCall[any](t, f.env, "create_spec_task", a)
	mustCall[any](t, f.as("w-echo"), "submit_spec", map[string]any{"task": "t-login", "items": []map[string]any{{"seq": 1, "title": "Schema"}, {"seq": 2, "title": "After", "blockedBy": []int{1}}}})
	mustCall[any](t, f.env, "review_spec", map[string]any{"task": "t-login", "approve": true})
	current := 1
	for attempt := 1; attempt <= 4; attempt++ {
		report(t, f, "w-b1", current, "blocked", "cannot")
		if attempt == 4 {
			break
		}
		got := inboxSubjects(t, f, "w-echo")
		if got[len(got)-1] != "Spec task t-login: re-plan a blocked item" {
			t.Fatalf("attempt %d: planner inbox = %q", attempt, got)
		}
		mustCall[any](t, f.as("w-echo"), "submit_spec", map[string]any{"task": "t-login", "replace": current,
			"items": []map[string]any{{"seq": 1, "title": "Schema, smaller"}}})
		current = attempt + 2 // numbered after every item there was: 3, 4, 5
		view := items(t, f, "t-login")
		if last := view[len(view)-1]; last.Seq != current || last.State != "in_progress" {
			t.Fatalf("attempt %d: items %+v, want %d in progress", attempt, view, current)
		}
	}
	replans := 0
	for _, s := range inboxSubjects(t, f, "w-echo") {
		if s == "Spec task t-login: re-plan a blocked item" {
			replans++
		}
	}
	if replans != 3 {
		t.Errorf("planner asked %d times, want 3", replans)
	}
	task := mustCall[store.SpecTaskView](t, f.env, "get_spec_task", map[string]any{"task": "t-login"})
	if task.Task.State != domain.TaskBlocked {
		t.Errorf("task state = %s, want blocked", task.Task.State)
	}
	rev := inboxSubjects(t, f, "w-owner")
	if rev[len(rev)-1] != "Spec task t-login: blocked, your decision" {
		t.Errorf("reviewer inbox = %q", rev)
	}
}
