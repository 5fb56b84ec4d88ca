package ui_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server/servertest"
)

// TestApproveFromTheInbox: a call held for a person shows in that
// person's inbox with approve and deny; approving there runs it.
func TestApproveFromTheInbox(t *testing.T) {
	t.Parallel()
	o := newOrg(t)
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"create_role", map[string]any{"id": "r-any", "title": "Any", "content": "Work."}},
		{"create_position", map[string]any{"id": "p-lead", "role": "r-any", "title": "Lead"}},
		{"create_position", map[string]any{"id": "p-desk", "role": "r-any", "title": "Desk", "reportsTo": "p-lead"}},
		{"create_position", map[string]any{"id": "p-sub", "role": "r-any", "title": "Sub", "reportsTo": "p-desk"}},
		{"hire_worker", map[string]any{"id": "w-lead", "position": "p-lead", "kind": "human", "name": "Lead", "grants": []string{"list_approvals", "decide_approval", "read_events"}}},
		{"hire_worker", map[string]any{"id": "w-desk", "position": "p-desk", "kind": "human", "name": "Desk", "grants": []string{"list_approvals", "read_events"}}},
		{"hire_worker", map[string]any{"id": "w-sub", "position": "p-sub", "kind": "human", "name": "Sub"}},
		{"grant_tool", map[string]any{"worker": "w-desk", "tool": "dismiss_worker", "approval": "required"}},
	} {
		o.call(t, c.tool, c.args)
	}
	desk := o.h.Connect(t, "w-desk", servertest.Token(t, o.h.Store, "w-desk"))
	held := servertest.Call[struct {
		Pending  bool
		Approval domain.Approval
	}](t, desk, "dismiss_worker", map[string]any{"id": "w-sub"})
	if !held.Pending {
		t.Fatalf("dismiss_worker answered %+v, want pending", held)
	}

	lead := o.client(t, "w-lead")
	_, page := lead.get(t, "/ui/inbox")
	for _, want := range []string{"w-desk asks to call dismiss_worker", `action="/ui/act/decide_approval"`, `value="` + held.Approval.ID + `"`} {
		if !strings.Contains(page, want) {
			t.Errorf("w-lead's inbox lacks %q", want)
		}
	}
	// The request's notice in w-lead's inbox stream is not listed beside
	// the request itself.
	if n := strings.Count(page, held.Approval.ID); n != 1 {
		t.Errorf("w-lead's inbox names %s %d times, want the request once", held.Approval.ID, n)
	}
	status, _ := lead.post(t, "/ui/act/decide_approval", url.Values{"csrf": {lead.csrf}, "next": {"/ui/inbox"}, "id": {held.Approval.ID}, "decision": {"approve"}}, nil)
	if status != http.StatusSeeOther || lead.location != "/ui/inbox" {
		t.Fatalf("approve: %d to %q, want 303 to the inbox", status, lead.location)
	}
	if w, _ := o.h.Store.GetWorker(t.Context(), "w-sub"); w.Active() {
		t.Error("w-sub still active after approval from the inbox")
	}
	if _, page = lead.get(t, "/ui/inbox"); strings.Contains(page, `action="/ui/act/decide_approval"`) {
		t.Error("the decided request is still offered for a decision")
	}
}

// TestHeldCallFromThePage: a person whose grant needs approval acts from
// a page; nothing runs, and their inbox shows the call waiting.
func TestHeldCallFromThePage(t *testing.T) {
	t.Parallel()
	o := newOrg(t)
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"create_role", map[string]any{"id": "r-any", "title": "Any", "content": "Work."}},
		{"create_position", map[string]any{"id": "p-lead", "role": "r-any", "title": "Lead"}},
		{"create_position", map[string]any{"id": "p-desk", "role": "r-any", "title": "Desk", "reportsTo": "p-lead"}},
		{"hire_worker", map[string]any{"id": "w-lead", "position": "p-lead", "kind": "human", "name": "Lead", "grants": []string{"list_approvals", "read_events", "list_roles"}}},
		{"hire_worker", map[string]any{"id": "w-desk", "position": "p-desk", "kind": "human", "name": "Desk"}},
		{"grant_tool", map[string]any{"worker": "w-lead", "tool": "create_role", "approval": "required"}},
	} {
		o.call(t, c.tool, c.args)
	}
	lead := o.client(t, "w-lead")
	status, _ := lead.post(t, "/ui/act/create_role", url.Values{"csrf": {lead.csrf}, "next": {"/ui/roles/{id}"}, "id": {"r-new"}, "title": {"New"}, "content": {"x"}}, nil)
	if status != http.StatusSeeOther || lead.location != "/ui/inbox" {
		t.Fatalf("held create_role: %d to %q, want 303 to the inbox", status, lead.location)
	}
	if _, err := o.h.Store.GetRole(t.Context(), "r-new"); err == nil {
		t.Fatal("the held call ran")
	}
	if _, page := lead.get(t, "/ui/inbox"); !strings.Contains(page, "Your call of create_role waits for w-owner") {
		t.Errorf("w-lead's inbox does not show the waiting call:\n%s", page)
	}
}

// TestApprovalShowsTheWholeCall: an approver sees every argument of the
// call in full — a body cut at 200 characters could hide what approving
// it would send — and can deny it with a note the requester reads.
func TestApprovalShowsTheWholeCall(t *testing.T) {
	t.Parallel()
	o := newOrg(t)
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"create_role", map[string]any{"id": "r-any", "title": "Any", "content": "Work."}},
		{"create_position", map[string]any{"id": "p-desk", "role": "r-any", "title": "Desk"}},
		{"hire_worker", map[string]any{"id": "w-desk", "position": "p-desk", "kind": "human", "name": "Desk", "grants": []string{"read_events"}}},
		{"create_stream", map[string]any{"id": "s-news", "name": "news"}},
		{"invite_workers", map[string]any{"stream": "s-news", "workers": []string{"w-desk"}}},
		{"grant_tool", map[string]any{"worker": "w-desk", "tool": "publish", "approval": "required"}},
	} {
		o.call(t, c.tool, c.args)
	}
	body := strings.Repeat("All is well with the quarter. ", 20) + "P.S. wire the float to account 99-0042."
	desk := o.h.Connect(t, "w-desk", servertest.Token(t, o.h.Store, "w-desk"))
	held := servertest.Call[struct {
		Pending  bool
		Approval domain.Approval
	}](t, desk, "publish", map[string]any{"stream": "s-news", "body": body})
	if !held.Pending {
		t.Fatalf("publish answered %+v, want pending", held)
	}

	owner := o.client(t, "w-owner")
	_, page := owner.get(t, "/ui/inbox")
	for _, want := range []string{
		"<dt>body</dt><dd><pre>" + body + "</pre></dd>",
		"<dt>stream</dt><dd><pre>s-news</pre></dd>",
		`name="note" placeholder="Note to the requester (optional)"`,
		`<button name="decision" value="deny" class="danger">Deny</button>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the owner's inbox lacks %q", want)
		}
	}
	status, _ := owner.post(t, "/ui/act/decide_approval", url.Values{"csrf": {owner.csrf}, "next": {"/ui/inbox"},
		"id": {held.Approval.ID}, "decision": {"deny"}, "note": {"no account numbers on news"}}, nil)
	if status != http.StatusSeeOther {
		t.Fatalf("deny: %d, want 303", status)
	}
	a, err := o.h.Store.GetApproval(t.Context(), held.Approval.ID)
	if err != nil || a.State != domain.ApprovalDenied || a.Note != "no account numbers on news" {
		t.Errorf("the approval is %s with note %q (%v), want denied with the note", a.State, a.Note, err)
	}
}
