package tools

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
)

func TestListApprovals(t *testing.T) {
	ids := func(want ...string) func(t *testing.T, f fixture, got listApprovalsOut) {
		return func(t *testing.T, f fixture, got listApprovalsOut) {
			var ws []string
			for _, a := range got.Approvals {
				ws = append(ws, a.WorkerID+"/"+string(a.State))
			}
			if len(ws) != len(want) || (len(ws) > 0 && ws[0] != want[0]) {
				t.Errorf("approvals = %v, want %v", ws, want)
			}
		}
	}
	held := func(t *testing.T, f fixture) { withHeld(t, f, nil) }
	opt := ignoreApprovals()
	runTable(t, "list_approvals", []toolCase[listApprovalsOut]{
		{name: "the owner sees every pending request", setup: held, check: ids("w-desk/pending")},
		{name: "the approver sees what it is to decide", setup: held, caller: "w-lead", check: ids("w-desk/pending")},
		{name: "the requester sees what it asked", setup: held, caller: "w-desk", check: ids("w-desk/pending")},
		{name: "others see nothing", setup: held, caller: "w-maya", check: ids()},
		{
			name: "by state",
			setup: func(t *testing.T, f fixture) {
				a := withHeld(t, f, nil)
				mustCall[any](t, f.as("w-lead"), "decide_approval", map[string]any{"id": a.ID, "decision": "deny"})
			},
			caller: "w-lead",
			args:   map[string]any{"state": "denied"},
			check:  ids("w-desk/denied"),
		},
		{name: "unknown state", args: map[string]any{"state": "maybe"}, wantErr: []string{"state", `"pending"`, `"executed"`}, wantIs: domain.ErrInvalid},
	}, opt)
}

// ignoreApprovals compares lists by their check alone: ids and times are
// the store's.
func ignoreApprovals() cmp.Option {
	return cmp.Comparer(func(a, b listApprovalsOut) bool { return true })
}
