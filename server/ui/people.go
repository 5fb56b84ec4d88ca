package ui

import (
	"net/http"
	"net/url"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/tools"
)

type peoplePage struct {
	Invitations []store.Invitation
	Err         string
	Positions   []domain.Position
	People      []person
	Roles       []domain.OrgRole
	// Invited is the invitation just made, with its link to copy.
	Invited *invited
}

// invited is what the inviter needs after an invite: the absolute link
// to give the person, why no email went, if none did, and why it cannot
// be accepted yet, if it cannot.
type invited struct {
	Email, Link, NotSent, CannotAccept string
}

// person is a human worker with its org role, for the roles form.
type person struct {
	Worker domain.Worker
	Role   domain.OrgRole
}

// handlePeople is the admin's page of people: invite one by email, the
// invitations and their state (revoke a pending one), and each person's
// org role. Every change goes through the tools, as over MCP.
func (u *UI) handlePeople(w http.ResponseWriter, r *http.Request, v *viewer) {
	if !v.Can("list_invitations") {
		u.renderError(w, r, v, http.StatusForbidden, string(v.Role)+" may not manage people: invitations and org roles are an admin's")
		return
	}
	ctx := r.Context()
	p := peoplePage{Roles: domain.OrgRoles}
	got, err := invoke[struct{ Invitations []store.Invitation }](ctx, v, "list_invitations", nil)
	p.Invitations, p.Err = got.Invitations, sectionErr(err)
	p.Invited = u.justInvited(r, v, p.Invitations)
	if pos, err := invoke[struct{ Positions []domain.Position }](ctx, v, "list_positions", nil); err == nil {
		p.Positions = pos.Positions
	}
	humans, err := u.st.ListWorkers(ctx, store.WorkerFilter{Kind: domain.WorkerHuman})
	if err != nil {
		u.fail(w, r, v, err)
		return
	}
	for _, h := range humans {
		role, err := u.st.OrgRole(ctx, h.ID)
		if err != nil {
			u.fail(w, r, v, err)
			return
		}
		p.People = append(p.People, person{Worker: h, Role: role})
	}
	u.render(w, r, http.StatusOK, "people", pageData{Title: "People", Nav: "people", V: v, Body: p})
}

// justInvited is the notice after an invite (the form goes on to
// ?invited=inv-…): only for a pending invitation this admin can list.
func (u *UI) justInvited(r *http.Request, v *viewer, invs []store.Invitation) *invited {
	id := r.URL.Query().Get("invited")
	for _, inv := range invs {
		if id != "" && inv.ID == id && inv.Status == store.InvitePending {
			return &invited{Email: inv.Email, NotSent: tools.EmailUnready(r.Context(), v.env), CannotAccept: tools.InvitationUnacceptable(r.Context(), u.st),
				Link: BaseURL(u.st, r) + "/ui/signin?invitation=" + url.QueryEscape(inv.ID)}
		}
	}
	return nil
}
