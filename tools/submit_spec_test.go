package tools

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

func TestSubmitSpec(t *testing.T) {
	repo := gitRepo(t)
	spec := func(items []map[string]any) map[string]any {
		return map[string]any{"task": "t-login", "design": "# Design\nA users table and a session cookie.\n", "items": items}
	}
	runTable(t, "submit_spec", []toolCase[taskOut]{
		{
			name:   "the planner's spec goes to the reviewer with the design",
			setup:  withSpecTask,
			caller: "w-echo",
			args:   spec(loginItems),
			want:   taskOut{ID: "t-login", State: "spec_review"},
			check: func(t *testing.T, f fixture, _ taskOut) {
				evs, _ := f.env.Store.ReadEvents(t.Context(), storeQuery(domain.InboxStream("w-owner")))
				last := evs[len(evs)-1].Message
				if last.Subject != "Spec task t-login: review the spec" || !strings.Contains(last.Body, "A users table and a session cookie.") ||
					!strings.Contains(last.Body, "- [ ] 4. Wire up (after 2, 3)") {
					t.Errorf("reviewer notice = %q\n%s", last.Subject, last.Body)
				}
			},
		},
		{
			name: "with a repository design.md and progress.md are committed as the planner",
			setup: func(t *testing.T, f fixture) {
				withBuilders(t, f)
				mustCall[any](t, f.env, "create_spec_task", taskArgs(repo))
			},
			caller: "w-echo",
			args:   spec(loginItems),
			want:   taskOut{ID: "t-login", State: "spec_review"},
			check: func(t *testing.T, f fixture, _ taskOut) {
				if got := gitShow(t, repo, "t-login/design.md"); !strings.Contains(got, "session cookie") {
					t.Errorf("design.md = %q", got)
				}
				want := "# Progress: Login\n\n- [ ] 1. Users table\n- [ ] 2. Login page\n- [ ] 3. Session handler (after 1)\n- [ ] 4. Wire up (after 2, 3)\n"
				if diff := cmp.Diff(want, gitShow(t, repo, "t-login/progress.md")); diff != "" {
					t.Errorf("progress.md (-want +got):\n%s", diff)
				}
			},
		},
		{name: "a cycle is refused, named", setup: withSpecTask, caller: "w-echo",
			args: spec([]map[string]any{{"seq": 1, "title": "a", "blockedBy": []int{3}}, {"seq": 2, "title": "b", "blockedBy": []int{1}},
				{"seq": 3, "title": "c", "blockedBy": []int{2}}}),
			wantErr: []string{"items form a cycle: 1 → 3 → 2 → 1"}, wantIs: domain.ErrInvalid},
		{name: "unknown blocker", setup: withSpecTask, caller: "w-echo", args: spec([]map[string]any{{"seq": 1, "title": "a", "blockedBy": []int{7}}}),
			wantErr: []string{"item 1 is blocked by item 7, which does not exist"}, wantIs: domain.ErrInvalid},
		{name: "no items", setup: withSpecTask, caller: "w-echo", args: spec([]map[string]any{}), wantErr: []string{"items: is required"}, wantIs: domain.ErrInvalid},
		{name: "only the planner", setup: withSpecTask, caller: "w-b1", args: spec(loginItems),
			wantErr: []string{"only the planner w-echo submits the spec of t-login"}, wantIs: domain.ErrForbidden},
		{name: "not while under review", setup: withSubmitted, caller: "w-echo", args: spec(loginItems),
			wantErr: []string{`a task in state "spec_review" does not allow "submit_spec" (allowed: "approve", "request_changes", "block", "cancel")`},
			wantIs:  domain.ErrConflict},
		{name: "unknown task", setup: withSpecTask, caller: "w-echo", args: map[string]any{"task": "t-nope", "items": loginItems},
			wantErr: []string{`spec task "t-nope": not found`}, wantIs: domain.ErrNotFound},
		{
			name: "re-plan: the replacements keep the blocked item's predecessors and its dependents wait for them",
			setup: func(t *testing.T, f fixture) {
				withApproved(t, f)
				report(t, f, "w-b1", 1, "delivered", "table")
				report(t, f, "w-b1", 3, "blocked", "sessions need a store") // item 3 (after 1) went to w-b1
			},
			caller: "w-echo",
			args: map[string]any{"task": "t-login", "replace": 3, "items": []map[string]any{
				{"seq": 1, "title": "Session store"}, {"seq": 2, "title": "Session handler", "blockedBy": []int{1}}}},
			want: taskOut{ID: "t-login", State: "implementation"},
			check: func(t *testing.T, f fixture, _ taskOut) {
				view := mustCall[store.SpecTaskView](t, f.env, "get_spec_task", map[string]any{"task": "t-login"})
				type row struct {
					Seq       int
					Title     string
					BlockedBy []int
					State     domain.ItemState
				}
				var got []row
				for _, it := range view.Items {
					got = append(got, row{it.Seq, it.Title, it.BlockedBy, it.State})
				}
				want := []row{{1, "Users table", nil, domain.ItemDone}, {2, "Login page", nil, domain.ItemInProgress},
					{4, "Wire up", []int{2, 5, 6}, domain.ItemPending}, {5, "Session store", []int{1}, domain.ItemInProgress},
					{6, "Session handler", []int{5}, domain.ItemPending}}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("items (-want +got):\n%s", diff)
				}
			},
		},
		{
			name: "after changes to the built work, the planner's new items are added once and handed out",
			setup: func(t *testing.T, f fixture) {
				withApproved(t, f)
				for _, r := range []struct {
					w    string
					item int
				}{{"w-b1", 1}, {"w-b2", 2}, {"w-b1", 3}, {"w-b1", 4}} {
					report(t, f, r.w, r.item, "delivered", "done")
				}
				mustCall[any](t, f.env, "review_spec", map[string]any{"task": "t-login", "comments": "Add a logout link."})
			},
			caller: "w-echo",
			args:   map[string]any{"task": "t-login", "items": []map[string]any{{"seq": 1, "title": "Logout link"}}},
			want:   taskOut{ID: "t-login", State: "implementation"},
			check: func(t *testing.T, f fixture, _ taskOut) {
				if got := items(t, f, "t-login"); got[4] != (itemOut{5, "in_progress", "w-b1"}) {
					t.Errorf("items = %+v, want 5 in progress with w-b1", got)
				}
				_, err := call[any](t, f.as("w-echo"), "submit_spec", map[string]any{"task": "t-login", "items": []map[string]any{{"seq": 1, "title": "Logout link"}}})
				if err == nil || !strings.Contains(err.Error(), "name the blocked item to re-plan") {
					t.Errorf("a replayed submit = %v, want refused", err)
				}
			},
		},
		{name: "in implementation new items need the reviewer's request", setup: withApproved, caller: "w-echo",
			args:    map[string]any{"task": "t-login", "items": []map[string]any{{"seq": 1, "title": "x"}}},
			wantErr: []string{"t-login is in implementation; name the blocked item to re-plan with replace"}, wantIs: domain.ErrConflict},
		{name: "re-plan needs a blocked item", setup: withApproved, caller: "w-echo",
			args:    map[string]any{"task": "t-login", "replace": 1, "items": []map[string]any{{"seq": 1, "title": "x"}}},
			wantErr: []string{"item 1 of t-login is in_progress; only a blocked item is re-planned"}, wantIs: domain.ErrConflict},
	})
}
