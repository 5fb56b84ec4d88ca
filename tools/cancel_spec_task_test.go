package tools

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
)

func TestCancelSpecTask(t *testing.T) {
	runTable(t, "cancel_spec_task", []toolCase[taskOut]{
		{
			name: "cancelled in implementation: its builders are released", setup: withApproved,
			args: map[string]any{"task": "t-login", "reason": "dropped"},
			want: taskOut{ID: "t-login", State: "cancelled"},
			check: func(t *testing.T, f fixture, _ taskOut) {
				want := []itemOut{{1, "pending", ""}, {2, "pending", ""}, {3, "pending", ""}, {4, "pending", ""}}
				if diff := cmp.Diff(want, items(t, f, "t-login")); diff != "" {
					t.Errorf("items (-want +got):\n%s", diff)
				}
			},
		},
		{name: "the reviewer may cancel", setup: func(t *testing.T, f fixture) {
			withBuilders(t, f)
			a := taskArgs("")
			a["reviewer"] = "w-maya"
			mustCall[any](t, f.env, "create_spec_task", a)
		}, caller: "w-maya", args: map[string]any{"task": "t-login"}, want: taskOut{ID: "t-login", State: "cancelled"}},
		{name: "a builder may not", setup: withApproved, caller: "w-b1", args: map[string]any{"task": "t-login"}, wantIs: domain.ErrForbidden},
		{name: "finished is final", setup: func(t *testing.T, f fixture) {
			withSpecTask(t, f)
			mustCall[any](t, f.env, "cancel_spec_task", map[string]any{"task": "t-login"})
		}, args: map[string]any{"task": "t-login"},
			wantErr: []string{`a task in state "cancelled" does not allow "cancel" (allowed: none, the task is finished)`}, wantIs: domain.ErrConflict},
		{name: "unknown task", args: map[string]any{"task": "t-nope"}, wantErr: []string{`spec task "t-nope": not found`}, wantIs: domain.ErrNotFound},
	})
}
