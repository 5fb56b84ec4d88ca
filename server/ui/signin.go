package ui

import (
	"crypto/hmac"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"net/http"
	"strings"

	"github.com/helixml/helix-org/store"
)

// signinCookie carries the sign-in form's anti-forgery value: there is no
// session yet to derive one from, so the form and the cookie must match.
const signinCookie = "helix_signin"

type signInPage struct {
	Next  string
	CSRF  string
	Error string
}

// handleSignInForm shows the token form, or spends a one-click sign-in
// code and redirects at once, so the code never stays in the address bar.
func (u *UI) handleSignInForm(w http.ResponseWriter, r *http.Request) {
	next := localPath(r.URL.Query().Get("next"))
	if code := r.URL.Query().Get("code"); code != "" {
		id, sess, err := u.st.SignInWithCode(r.Context(), code, u.sessionTTL(r))
		if err != nil {
			if !errors.Is(err, store.ErrBadSignInCode) && !errors.Is(err, store.ErrBadToken) {
				u.log.Error("sign in with code", "err", err)
			}
			http.Redirect(w, r, "/ui/signin?failed=code", http.StatusSeeOther)
			return
		}
		u.setSession(w, r, id, sess)
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	}
	if _, err := u.viewerOf(r); err == nil {
		http.Redirect(w, r, next, http.StatusSeeOther) // already signed in
		return
	}
	p := signInPage{Next: next}
	if r.URL.Query().Get("failed") == "code" {
		p.Error = store.ErrBadSignInCode.Error()
	}
	u.showSignIn(w, r, http.StatusOK, p)
}

// handleSignIn exchanges a pasted operator token for a session.
func (u *UI) handleSignIn(w http.ResponseWriter, r *http.Request) {
	p := signInPage{Next: localPath(r.PostFormValue("next"))}
	c, err := r.Cookie(signinCookie)
	if err != nil || !hmac.Equal([]byte(c.Value), []byte(r.PostFormValue("csrf"))) {
		p.Error = "this sign-in form has expired or was sent from elsewhere; try again"
		u.showSignIn(w, r, http.StatusForbidden, p)
		return
	}
	id, sess, err := u.st.SignInWithToken(r.Context(), strings.TrimSpace(r.PostFormValue("token")), u.sessionTTL(r))
	if err != nil {
		status := u.cfg.Status(err)
		if errors.Is(err, store.ErrBadToken) {
			status = http.StatusUnauthorized
		}
		p.Error = "sign-in refused: " + err.Error()
		if status >= 500 {
			u.log.Error("sign in", "err", err)
			p.Error = "sign-in failed: the server could not check the token; see its log"
		}
		u.showSignIn(w, r, status, p)
		return
	}
	u.setSession(w, r, id, sess)
	http.Redirect(w, r, p.Next, http.StatusSeeOther)
}

func (u *UI) showSignIn(w http.ResponseWriter, r *http.Request, status int, p signInPage) {
	raw := make([]byte, 32)
	rand.Read(raw)
	p.CSRF = base64.RawURLEncoding.EncodeToString(raw)
	http.SetCookie(w, &http.Cookie{Name: signinCookie, Value: p.CSRF, Path: "/ui/signin", MaxAge: 3600,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: u.secureCookies(r)})
	u.render(w, r, status, "signin", pageData{Title: "Sign in", Body: p})
}
