package tools

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

func TestReviewSpec(t *testing.T) {
	runTable(t, "review_spec", []toolCase[taskOut]{
		{
			name:  "approval queues the implementation and hands out the two free items",
			setup: withSubmitted,
			args:  map[string]any{"task": "t-login", "approve": true},
			want:  taskOut{ID: "t-login", State: "implementation"},
			check: func(t *testing.T, f fixture, _ taskOut) {
				view := mustCall[store.SpecTaskView](t, f.env, "get_spec_task", map[string]any{"task": "t-login"})
				var got []itemOut
				for _, it := range view.Items {
					got = append(got, itemOut{Seq: it.Seq, State: string(it.State), Worker: it.Worker})
				}
				want := []itemOut{{1, "in_progress", "w-b1"}, {2, "in_progress", "w-b2"}, {3, "pending", ""}, {4, "pending", ""}}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("items (-want +got):\n%s", diff)
				}
				if got := inboxSubjects(t, f, "w-b2"); !slices.Equal(got, []string{"Spec task t-login: build item 2"}) {
					t.Errorf("w-b2 inbox = %q", got)
				}
				evs, _ := f.env.Store.ReadEvents(t.Context(), storeQuery(domain.TaskStream("t-login")))
				var states []string
				for _, ev := range evs {
					states = append(states, ev.Message.Subject)
				}
				wantStates := []string{"t-login: backlog → spec_generation", "t-login: spec_generation → spec_review",
					"t-login: spec_review → spec_approved", "t-login: spec_approved → implementation_queued",
					"t-login: implementation_queued → implementation", "t-login: item 1 in_progress (w-b1)", "t-login: item 2 in_progress (w-b2)"}
				if diff := cmp.Diff(wantStates, states); diff != "" {
					t.Errorf("the task's stream (-want +got):\n%s", diff)
				}
			},
		},
		{
			name:  "changes requested go to the planner",
			setup: withSubmitted,
			args:  map[string]any{"task": "t-login", "approve": false, "comments": "Hash the passwords."},
			want:  taskOut{ID: "t-login", State: "spec_revision"},
			check: func(t *testing.T, f fixture, _ taskOut) {
				view := mustCall[store.SpecTaskView](t, f.env, "get_spec_task", map[string]any{"task": "t-login"})
				if view.Task.Revisions != 1 || view.Task.Comments != "Hash the passwords." {
					t.Errorf("task = %+v, want one revision with the comments", view.Task)
				}
				got := inboxSubjects(t, f, "w-echo")
				if got[len(got)-1] != "Spec task t-login: changes requested" {
					t.Errorf("planner inbox = %q", got)
				}
			},
		},
		{name: "changes need comments", setup: withSubmitted, args: map[string]any{"task": "t-login"},
			wantErr: []string{"comments: say what to change"}, wantIs: domain.ErrInvalid},
		{name: "a non-reviewer may not approve", setup: withSubmitted, caller: "w-maya", args: map[string]any{"task": "t-login", "approve": true},
			wantErr: []string{"only the reviewer w-owner reviews t-login"}, wantIs: domain.ErrForbidden},
		{name: "the planner may not approve its own spec", setup: withSubmitted, caller: "w-echo", args: map[string]any{"task": "t-login", "approve": true},
			wantIs: domain.ErrForbidden},
		{name: "nothing to approve before the spec", setup: withSpecTask, args: map[string]any{"task": "t-login", "approve": true},
			wantErr: []string{`a task in state "spec_generation" does not allow "approve" (allowed: "submit_spec", "block", "cancel")`},
			wantIs:  domain.ErrConflict},
		{name: "unknown task", args: map[string]any{"task": "t-nope", "approve": true}, wantErr: []string{`spec task "t-nope": not found`}, wantIs: domain.ErrNotFound},
	})
}
