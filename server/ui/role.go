package ui

import (
	"net/http"

	"github.com/helixml/helix-org/domain"
)

type rolePage struct {
	Role      domain.Role
	Positions []domain.Position
	Err       string
}

// handleRole shows a role's job description, the positions that fill it
// and, for holders of update_role, an editor with a live preview.
func (u *UI) handleRole(w http.ResponseWriter, r *http.Request, v *viewer) {
	ctx := r.Context()
	id := r.PathValue("id")
	role, err := invoke[domain.Role](ctx, v, "get_role", map[string]any{"id": id})
	if err != nil {
		u.fail(w, r, v, err)
		return
	}
	p := rolePage{Role: role}
	positions, err := invoke[struct{ Positions []domain.Position }](ctx, v, "list_positions", map[string]any{"role": id})
	p.Positions, p.Err = positions.Positions, sectionErr(err)
	u.render(w, r, http.StatusOK, "role", pageData{Title: role.Title, Nav: "org", V: v, Body: p})
}
