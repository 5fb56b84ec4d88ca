package ui

import (
	"net/http"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// Operator returns the worker of the browser session r carries when that
// session may change operational config — the owner's, begun with a
// one-time link, as the settings page asks — for a route outside the UI's
// own pages that changes it (a transport's install flow, which stores the
// token it is given). The session cookie is scoped to /ui/, so such a
// route is mounted under /ui/.
func Operator(st *store.Store, r *http.Request) (string, error) {
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return "", store.ErrNoSession
	}
	sess, err := st.VerifySession(r.Context(), c.Value)
	if err != nil {
		return "", err
	}
	switch {
	case sess.WorkerID != store.OwnerWorker:
		return "", domain.Forbidden("operational config is the owner's: sign in as %s", store.OwnerWorker)
	case !sess.ViaLink:
		return "", domain.Forbidden("this session began with a token; sign in with a one-time link (helix-org bootstrap or helix-org token create prints one) to change operational config")
	}
	return sess.WorkerID, nil
}
