package ui

import (
	"context"
	"errors"

	"net/http"
	"net/url"
	"time"

	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/tools"
)

// sessionCookie holds the session id. It is scoped to /ui/, unreadable by
// scripts, and never sent on a request another site starts.
const sessionCookie = "helix_session"

type viewerKey struct{}

// signedIn runs a page handler for the signed-in viewer. A visitor without
// a live session is sent to sign in (or, for a write or a live view, told
// why not); every write must carry the session's CSRF token.
func (u *UI) signedIn(h func(http.ResponseWriter, *http.Request, *viewer)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, err := u.viewerOf(r)
		switch {
		case errors.Is(err, store.ErrNoSession) && r.Method == http.MethodGet && r.URL.Path != "/ui/live":
			http.Redirect(w, r, "/ui/signin?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
			return
		case errors.Is(err, store.ErrNoSession):
			u.renderError(w, r, nil, http.StatusUnauthorized, "not signed in, or your session has ended: sign in again")
			return
		case err != nil:
			u.fail(w, r, nil, err)
			return
		}
		if r.Method == http.MethodPost && !v.checkCSRF(r) {
			u.renderError(w, r, v, http.StatusForbidden, "refused: this form is missing its CSRF token or carries a wrong one; reload the page and try again")
			return
		}
		if r.Method == http.MethodPost && !readsOnly[r.URL.Path] {
			if err := v.Role.MayChange("send a form that changes the org (" + r.URL.Path + ")"); err != nil {
				u.renderError(w, r, v, http.StatusForbidden, err.Error())
				return
			}
		}
		h(w, r.WithContext(context.WithValue(r.Context(), viewerKey{}, v)), v)
	})
}

// readsOnly are the posts that change nothing in the org, which a viewer
// may send too: signing out, a message's preview, and connecting an MCP
// client (its token acts within the person's role, like the UI).
var readsOnly = map[string]bool{"/ui/signout": true, "/ui/preview": true, "/ui/oauth/authorize": true}

// viewerOf loads the person behind a request: the session named by the
// cookie, its worker, and the tools that worker holds right now.
func (u *UI) viewerOf(r *http.Request) (*viewer, error) {
	if v, ok := r.Context().Value(viewerKey{}).(*viewer); ok {
		return v, nil
	}
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return nil, store.ErrNoSession
	}
	return u.loadViewer(r.Context(), c.Value)
}

// loadViewer builds the viewer of a live session.
func (u *UI) loadViewer(ctx context.Context, sessionID string) (*viewer, error) {
	sess, err := u.st.VerifySession(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	w, err := u.st.GetWorker(ctx, sess.WorkerID)
	if err != nil {
		return nil, err
	}
	role, err := u.st.OrgRole(ctx, w.ID)
	if err != nil {
		return nil, err
	}
	granted, err := u.st.LiveTools(ctx, w.ID)
	if err != nil {
		return nil, err
	}
	skills, err := u.st.ListSkills(ctx)
	if err != nil {
		return nil, err
	}
	outside, err := u.st.OutsideTools(ctx)
	if err != nil {
		return nil, err
	}
	env := &tools.Env{Store: u.st, Root: u.cfg.Root, Caller: w.ID, Known: tools.KnownTools(skills, outside), Skills: u.cfg.Skills, SkillDefs: skills, OutsideTools: outside}
	return &viewer{Worker: w, Session: sess, Role: role, CSRF: csrfToken(sessionID), granted: granted, env: env, sessionID: sessionID}, nil
}

// setSession hands the browser its session cookie. It is Secure over TLS
// or when ui.secure_cookies says a proxy terminates TLS in front of us.
// Its lifetime is relative (Max-Age), so a browser whose clock differs
// from the server's keeps it as long as the session lasts; the server
// ends the session by its own clock either way.
func (u *UI) setSession(w http.ResponseWriter, r *http.Request, id string, sess store.Session) {
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: id, Path: "/ui/", MaxAge: max(1, int(sess.ExpiresAt.Sub(sess.CreatedAt).Seconds())),
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: u.secureCookies(r)})
}

func (u *UI) clearSession(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/ui/", MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: u.secureCookies(r)})
}

func (u *UI) secureCookies(r *http.Request) bool {
	return r.TLS != nil || u.st.BoolSetting(r.Context(), SecureCookiesSetting)
}

// sessionTTL is read at each sign-in, so a config change applies to the
// next session without a restart.
func (u *UI) sessionTTL(r *http.Request) time.Duration {
	d := u.st.DurationSetting(r.Context(), SessionTTLSetting)
	if d <= 0 {
		return 12 * time.Hour
	}
	return d
}

// localPath keeps a redirect target on this UI: a path under /ui/, never
// another host, so a crafted ?next= cannot send a person elsewhere.
func localPath(p string) string {
	u, err := url.Parse(p)
	if err != nil || u.Scheme != "" || u.Host != "" || len(u.Path) < 4 || u.Path[:4] != "/ui/" || (len(p) > 1 && p[1] == '/') {
		return "/ui/"
	}
	if u.Fragment != "" {
		return u.RequestURI() + "#" + u.EscapedFragment()
	}
	return u.RequestURI()
}
