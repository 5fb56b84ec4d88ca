package tools

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// withHeld adds to withLead a person below w-desk, gives w-desk
// dismiss_worker with approval required, and has w-desk ask to dismiss
// w-sub. args, when given, gets the request's id.
//
//	p-sub "Sub" reports to p-desk; w-sub human "Sub" in it
func withHeld(t *testing.T, f fixture, args map[string]any) domain.Approval {
	t.Helper()
	withLead(t, f)
	ctx := t.Context()
	st := f.env.Store
	must(t)(st.CreatePosition(ctx, store.OwnerWorker, domain.Position{ID: "p-sub", RoleID: "r-desk", Title: "Sub", ReportsTo: "p-desk"}))
	must(t)(st.HireWorker(ctx, store.OwnerWorker, domain.Worker{ID: "w-sub", Kind: domain.WorkerHuman, PositionID: "p-sub", Name: "Sub"}, nil))
	must(t)(st.GrantTool(ctx, store.OwnerWorker, domain.Grant{WorkerID: "w-desk", Tool: "dismiss_worker", Approval: domain.ApprovalRequired}))
	p := invokeAs(t, f, "w-desk", "", "dismiss_worker", `{"id":"w-sub","_reason":"left the team"}`)
	if args != nil {
		args["id"] = p.Approval.ID
	}
	return p.Approval
}

// invokeAs calls a tool through Invoke, as worker in run activation, and
// decodes what a held call answers.
func invokeAs(t *testing.T, f fixture, worker, activation, tool, args string) pendingOut {
	t.Helper()
	env := f.as(worker)
	env.ActivationID = activation
	granted, err := f.env.Store.LiveTools(t.Context(), worker)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Invoke(t.Context(), env, granted, tool, json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s %s: %v", tool, args, err)
	}
	p, _ := out.(pendingOut)
	return p
}

func inboxBodies(t *testing.T, f fixture, worker string) []string {
	t.Helper()
	evs, err := f.env.Store.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{domain.InboxStream(worker)}})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range evs {
		out = append(out, e.Message.Body)
	}
	return out
}

func TestDecideApproval(t *testing.T) {
	args := `{"id":"w-sub"}`
	held := domain.Approval{WorkerID: "w-desk", Tool: "dismiss_worker", Arguments: json.RawMessage(args), ArgsHash: domain.ArgsHash([]byte(args)),
		Reason: "left the team", Why: "the grant of dismiss_worker requires approval", Kind: domain.ApprovalGrant, Approver: "w-lead", DecidedBy: "w-lead",
		CreatedAt: t0, ExpiresAt: t0.Add(24 * time.Hour), DecidedAt: &t0}
	with := func(state domain.ApprovalState, note string) domain.Approval {
		a := held
		a.State, a.Note = state, note
		return a
	}
	ignore := cmpopts.IgnoreFields(domain.Approval{}, "ID", "Result")
	approve, deny, replay, expired, foreign, own, bad, missing :=
		map[string]any{"decision": "approve"}, map[string]any{"decision": "deny", "note": "not now"}, map[string]any{"decision": "approve"},
		map[string]any{"decision": "approve"}, map[string]any{"decision": "approve"}, map[string]any{"decision": "approve"},
		map[string]any{"decision": "maybe"}, map[string]any{"decision": "approve"}
	runTable(t, "decide_approval", []toolCase[domain.Approval]{
		{
			name:   "approve runs the call once as its requester and tells it",
			setup:  func(t *testing.T, f fixture) { withHeld(t, f, approve) },
			caller: "w-lead",
			args:   approve,
			want:   with(domain.ApprovalExecuted, ""),
			check: func(t *testing.T, f fixture, got domain.Approval) {
				w, _ := f.env.Store.GetWorker(t.Context(), "w-sub")
				if w.Active() || !strings.Contains(string(got.Result), `"dismissedAt"`) {
					t.Errorf("w-sub = %+v, result %s; want dismissed", w, got.Result)
				}
				c := lastOrgChange(t, f.env.Store)
				if c.Action != "dismiss_worker" || c.Actor != "w-desk" || c.Target != "w-sub" {
					t.Errorf("s-org change = %+v, want w-desk dismissing w-sub", c)
				}
				if b := inboxBodies(t, f, "w-desk"); len(b) != 1 || !strings.Contains(b[0], "w-lead approved your call of dismiss_worker") {
					t.Errorf("w-desk's inbox = %q, want the outcome", b)
				}
			},
		},
		{
			name:   "deny tells the requester the note and runs nothing",
			setup:  func(t *testing.T, f fixture) { withHeld(t, f, deny) },
			caller: "w-lead",
			args:   deny,
			want:   with(domain.ApprovalDenied, "not now"),
			check: func(t *testing.T, f fixture, _ domain.Approval) {
				if w, _ := f.env.Store.GetWorker(t.Context(), "w-sub"); !w.Active() {
					t.Errorf("w-sub dismissed by a denied request")
				}
				if b := inboxBodies(t, f, "w-desk"); len(b) != 1 || !strings.Contains(b[0], "Note: not now") {
					t.Errorf("w-desk's inbox = %q, want the denial with its note", b)
				}
			},
		},
		{
			name: "a replayed approval does nothing",
			setup: func(t *testing.T, f fixture) {
				withHeld(t, f, replay)
				mustCall[any](t, f.as("w-lead"), "decide_approval", map[string]any{"id": replay["id"], "decision": "approve"})
			},
			caller:  "w-lead",
			args:    replay,
			wantErr: []string{"is already executed"},
			wantIs:  domain.ErrConflict,
		},
		{
			name:    "an expired request cannot be approved",
			setup:   func(t *testing.T, f fixture) { withHeld(t, f, expired); f.clock.Advance(25 * time.Hour) },
			caller:  "w-lead",
			args:    expired,
			wantErr: []string{"expired at 2026-03-05T10:00:00Z"},
			wantIs:  domain.ErrConflict,
		},
		{
			name:    "a worker beside the approver cannot decide",
			setup:   func(t *testing.T, f fixture) { withHeld(t, f, foreign) },
			caller:  "w-maya",
			args:    foreign,
			wantErr: []string{"only w-lead (the approver)"},
			wantIs:  domain.ErrForbidden,
		},
		{
			name:    "the requester cannot decide its own",
			setup:   func(t *testing.T, f fixture) { withHeld(t, f, own) },
			caller:  "w-desk",
			args:    own,
			wantErr: []string{"cannot decide its own"},
			wantIs:  domain.ErrForbidden,
		},
		{
			name:    "unknown decision",
			setup:   func(t *testing.T, f fixture) { withHeld(t, f, bad) },
			caller:  "w-lead",
			args:    bad,
			wantErr: []string{"decision", `"approve"`, `"deny"`},
			wantIs:  domain.ErrInvalid,
		},
		{
			name:    "missing id",
			caller:  "w-lead",
			args:    missing,
			wantErr: []string{"id: is required"},
		},
	}, ignore)
}
