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
	// Code is a one-click link's code, which only the form's POST spends.
	Code string
	// Provider names the identity provider to sign in with; "" when none
	// is configured. Invitation marks a visitor an invitation sent here.
	Provider   string
	Invitation string
}

// handleSignInForm shows the token form or, for a one-click link, a page
// whose button spends the link's code; an invitation link, while no
// identity provider is set up, says it cannot be accepted yet. A GET
// never spends it: a mail scanner or prefetcher that opens the link would
// use it up, and a page elsewhere could sign a browser in as someone else
// by linking to it.
func (u *UI) handleSignInForm(w http.ResponseWriter, r *http.Request) {
	p := signInPage{Next: localPath(r.URL.Query().Get("next")), Code: r.URL.Query().Get("code"), Invitation: r.URL.Query().Get("invitation")}
	if _, err := u.viewerOf(r); err == nil && p.Code == "" {
		http.Redirect(w, r, p.Next, http.StatusSeeOther) // already signed in
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	if p.Invitation != "" && p.Code == "" && u.oidcName(r.Context()) == "" {
		u.showStalledInvitation(w, r, p.Invitation)
		return
	}
	u.showSignIn(w, r, http.StatusOK, p)
}

// handleSignIn exchanges a one-click link's code, or a pasted operator
// token, for a session. The form's anti-forgery value must match its
// cookie (SameSite=Strict), and the server refuses cross-origin posts
// (secure): only a form this server showed signs a browser in.
func (u *UI) handleSignIn(w http.ResponseWriter, r *http.Request) {
	p := signInPage{Next: localPath(r.PostFormValue("next"))}
	c, err := r.Cookie(signinCookie)
	if err != nil || !hmac.Equal([]byte(c.Value), []byte(r.PostFormValue("csrf"))) {
		p.Error = "this sign-in form has expired or was sent from elsewhere; try again"
		p.Code = r.PostFormValue("code")
		u.showSignIn(w, r, http.StatusForbidden, p)
		return
	}
	if code := r.PostFormValue("code"); code != "" {
		u.signInWithCode(w, r, code, p)
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

// signInWithCode spends a one-click link's code.
func (u *UI) signInWithCode(w http.ResponseWriter, r *http.Request, code string, p signInPage) {
	id, sess, err := u.st.SignInWithCode(r.Context(), code, u.sessionTTL(r))
	if err != nil {
		p.Error = store.ErrBadSignInCode.Error()
		status := http.StatusUnauthorized
		if !errors.Is(err, store.ErrBadSignInCode) && !errors.Is(err, store.ErrBadToken) {
			u.log.Error("sign in with code", "err", err)
			p.Error, status = "sign-in failed: the server could not check the link; see its log", http.StatusInternalServerError
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
	p.Provider = u.oidcName(r.Context())
	http.SetCookie(w, &http.Cookie{Name: signinCookie, Value: p.CSRF, Path: "/ui/signin", MaxAge: 3600,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: u.secureCookies(r)})
	u.render(w, r, status, "signin", pageData{Title: "Sign in", Body: p})
}
