package ui

import (
	"net/http"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// Operator returns the worker of the browser session r carries when that
// session may change operational config — an admin's, begun with a
// one-time link or the identity provider, as the settings page asks —
// for a route outside the UI's own pages that changes it (a transport's
// install flow, which stores the token it is given). The session cookie
// is scoped to /ui/, so such a route is mounted under /ui/.
func Operator(st *store.Store, r *http.Request) (string, error) {
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return "", store.ErrNoSession
	}
	sess, err := st.VerifySession(r.Context(), c.Value)
	if err != nil {
		return "", err
	}
	role, err := st.OrgRole(r.Context(), sess.WorkerID)
	if err != nil {
		return "", err
	}
	if err := role.MayAdminister("change operational config"); err != nil {
		return "", err
	}
	if !sess.Strong() {
		return "", domain.Forbidden("this session began with a token; sign in with your identity provider or a one-time link (helix-org bootstrap or helix-org token create prints one) to change operational config")
	}
	return sess.WorkerID, nil
}
