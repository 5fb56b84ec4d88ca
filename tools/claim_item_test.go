package tools

import (
	"testing"

	"github.com/helixml/helix-org/domain"
)

// withBusyB2 approves t-login while w-b2 is on an item of another task,
// so item 2 waits; cancelling the other task frees w-b2 to claim it.
func withBusyB2(t *testing.T, f fixture) {
	t.Helper()
	withBuilders(t, f)
	other := taskArgs("")
	other["id"], other["builders"] = "t-other", []string{"w-b2"}
	mustCall[any](t, f.env, "create_spec_task", other)
	mustCall[any](t, f.as("w-echo"), "submit_spec", map[string]any{"task": "t-other", "items": []map[string]any{{"seq": 1, "title": "x"}}})
	mustCall[any](t, f.env, "review_spec", map[string]any{"task": "t-other", "approve": true})
	mustCall[any](t, f.env, "create_spec_task", taskArgs(""))
	mustCall[any](t, f.as("w-echo"), "submit_spec", map[string]any{"task": "t-login", "items": loginItems})
	mustCall[any](t, f.env, "review_spec", map[string]any{"task": "t-login", "approve": true})
}

func TestClaimItem(t *testing.T) {
	runTable(t, "claim_item", []toolCase[itemOut]{
		{
			name: "a free builder claims a ready item",
			setup: func(t *testing.T, f fixture) {
				withBusyB2(t, f)
				mustCall[any](t, f.env, "cancel_spec_task", map[string]any{"task": "t-other"})
			},
			caller: "w-b2", args: map[string]any{"task": "t-login", "item": 2},
			want: itemOut{Seq: 2, State: "in_progress", Worker: "w-b2"},
		},
		{name: "one item at a time", setup: withBusyB2, caller: "w-b2", args: map[string]any{"task": "t-login", "item": 2},
			wantErr: []string{"w-b2 is already on an item; report it first"}, wantIs: domain.ErrConflict},
		{name: "not ready", setup: withApproved, caller: "w-b1", args: map[string]any{"task": "t-login", "item": 4},
			wantErr: []string{"item t-login/4 is pending and not ready to claim"}, wantIs: domain.ErrConflict},
		{name: "not a builder", setup: withApproved, caller: "w-echo", args: map[string]any{"task": "t-login", "item": 3},
			wantErr: []string{"w-echo is not a builder of t-login (builders: w-b1, w-b2)"}, wantIs: domain.ErrForbidden},
		{name: "before approval", setup: withSubmitted, caller: "w-b1", args: map[string]any{"task": "t-login", "item": 1},
			wantErr: []string{`t-login is in state "spec_review"; items are claimed in "implementation" (allowed: "approve", "request_changes", "block", "cancel")`},
			wantIs:  domain.ErrConflict},
		{name: "unknown item", setup: withApproved, caller: "w-b1", args: map[string]any{"task": "t-login", "item": 0},
			wantErr: []string{`item "t-login/0": not found`}, wantIs: domain.ErrNotFound},
	})
}
