package ui

import (
	"errors"
	"net/http"
	"strings"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// invitationPage is what an invitation link shows while no identity
// provider is set up: the invitee holds no token for the sign-in form,
// so it says why the link cannot work yet and whom to ask.
type invitationPage struct {
	// Org is the org's address, as the link itself shows it.
	Org string
	// Email is whom the invitation is for; "" when the link names no
	// pending invitation.
	Email string
}

// showStalledInvitation answers an invitation link when no one can sign
// in with an identity provider. An unknown, expired, revoked or accepted
// invitation reads the same: a guessed id learns nothing.
func (u *UI) showStalledInvitation(w http.ResponseWriter, r *http.Request, id string) {
	base := BaseURL(u.st, r)
	if _, host, ok := strings.Cut(base, "://"); ok {
		base = host
	}
	p, status := invitationPage{Org: base}, http.StatusOK
	inv, err := u.st.GetInvitation(r.Context(), id)
	switch {
	case err == nil && inv.Status == store.InvitePending:
		p.Email = inv.Email
	case err == nil || errors.Is(err, domain.ErrNotFound):
		status = http.StatusNotFound
	default:
		u.fail(w, r, nil, err)
		return
	}
	u.render(w, r, status, "invitation", pageData{Title: "Invitation", Body: p})
}
