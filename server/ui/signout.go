package ui

import "net/http"

// handleSignOut ends the session in the database, not just in the browser.
func (u *UI) handleSignOut(w http.ResponseWriter, r *http.Request, v *viewer) {
	if err := u.st.EndSession(r.Context(), v.sessionID); err != nil {
		u.fail(w, r, v, err)
		return
	}
	u.clearSession(w, r)
	if v.Session.OIDC {
		if end := u.endSessionURL(r); end != "" {
			// Out of the provider too, or its session signs the next
			// person at this browser straight back in.
			http.Redirect(w, r, end, http.StatusSeeOther)
			return
		}
	}
	http.Redirect(w, r, "/ui/signin", http.StatusSeeOther)
}
