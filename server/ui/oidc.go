package ui

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/safedial"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/tools"
)

// oidcCookie carries one sign-in's state, nonce and PKCE verifier from
// its start to the provider's redirect back. SameSite=Lax: that redirect
// is a top-level navigation from the provider's site.
const oidcCookie = "helix_oidc"

// oidcFlight is what the cookie holds.
type oidcFlight struct {
	State    string `json:"s"`
	Nonce    string `json:"n"`
	Verifier string `json:"v"`
	Next     string `json:"x"`
}

// oidcClient is the provider as one sign-in sees it: discovered from the
// issuer through the SSRF-guarded client, settings read anew each time.
type oidcClient struct {
	provider *oidc.Provider
	oauth    oauth2.Config
	ctx      context.Context // carries the HTTP client for go-oidc and oauth2
}

// oidcName is the provider's name for the sign-in button, "" when
// sign-in with a provider is off or lacks its issuer or client id.
func (u *UI) oidcName(ctx context.Context) string {
	if len(tools.IdentityProviderUnset(ctx, u.st)) > 0 {
		return ""
	}
	issuer, _ := u.st.SettingOr(ctx, tools.OIDCIssuerSetting)
	if name, _ := u.st.SettingOr(ctx, OIDCNameSetting); name != "" {
		return name
	}
	if p, err := url.Parse(issuer); err == nil {
		return p.Host
	}
	return issuer
}

// oidcClientFor discovers the provider; the redirect URI is this
// server's, from auth.public_url or else the request's own host.
func (u *UI) oidcClientFor(r *http.Request) (*oidcClient, error) {
	ctx := r.Context()
	issuer, _ := u.st.SettingOr(ctx, tools.OIDCIssuerSetting)
	id, _ := u.st.SettingOr(ctx, tools.OIDCClientIDSetting)
	secret, _ := u.st.SettingOr(ctx, tools.OIDCClientSecretSetting)
	if issuer == "" || id == "" {
		return nil, errors.New("sign-in with an identity provider is not configured: an admin sets auth.oidc.issuer and auth.oidc.client_id")
	}
	client := safedial.NewClient(safedial.Options{AllowPrivate: func(ctx context.Context) bool { return u.st.BoolSetting(ctx, OIDCAllowPrivateSetting) }})
	octx := oidc.ClientContext(ctx, client)
	p, err := oidc.NewProvider(octx, issuer)
	if err != nil {
		return nil, fmt.Errorf("discover the identity provider at %s: %w", issuer, err)
	}
	return &oidcClient{provider: p, ctx: octx, oauth: oauth2.Config{ClientID: id, ClientSecret: secret, Endpoint: p.Endpoint(),
		RedirectURL: u.baseURL(r) + "/ui/signin/oidc/callback", Scopes: []string{oidc.ScopeOpenID, "email", "profile"}}}, nil
}

// baseURL is where people reach this server: auth.public_url, or the
// request's scheme and host.
func (u *UI) baseURL(r *http.Request) string { return BaseURL(u.st, r) }

// BaseURL is where people reach the org r came to: auth.public_url, or
// else the request's scheme and host, followed by the path the org's
// handlers are mounted under (what an http.StripPrefix in front took
// off), so URLs built on it work for an org mounted below the root.
func BaseURL(st *store.Store, r *http.Request) string {
	if base, _ := st.SettingOr(r.Context(), tools.PublicURLSetting); base != "" {
		return strings.TrimSuffix(base, "/") + mountPrefix(r)
	}
	scheme := "http"
	if r.TLS != nil || st.BoolSetting(r.Context(), SecureCookiesSetting) {
		scheme = "https"
	}
	return scheme + "://" + r.Host + mountPrefix(r)
}

// mountPrefix is the part of the path the client asked for that the
// handler does not see: "" when mounted at the root.
func mountPrefix(r *http.Request) string {
	asked, err := url.ParseRequestURI(r.RequestURI)
	if err != nil {
		return ""
	}
	p, ok := strings.CutSuffix(asked.Path, r.URL.Path)
	if !ok {
		return ""
	}
	return strings.TrimSuffix(p, "/")
}

// handleOIDCStart sends the browser to the provider: authorization code
// with PKCE (S256), a fresh state and nonce kept in a cookie.
func (u *UI) handleOIDCStart(w http.ResponseWriter, r *http.Request) {
	c, err := u.oidcClientFor(r)
	if err != nil {
		u.oidcRefused(w, r, http.StatusBadGateway, err.Error())
		return
	}
	f := oidcFlight{State: randomValue(), Nonce: randomValue(), Verifier: oauth2.GenerateVerifier(), Next: localPath(r.URL.Query().Get("next"))}
	raw, _ := json.Marshal(f)
	http.SetCookie(w, &http.Cookie{Name: oidcCookie, Value: base64.RawURLEncoding.EncodeToString(raw), Path: "/ui/signin/oidc", MaxAge: 600,
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: u.secureCookies(r)})
	http.Redirect(w, r, c.oauth.AuthCodeURL(f.State, oidc.Nonce(f.Nonce), oauth2.S256ChallengeOption(f.Verifier)), http.StatusFound)
}

// handleOIDCCallback finishes a sign-in: the state must be this
// browser's, the code is exchanged with the PKCE verifier, the ID token
// verified (signature by the provider's JWKS, issuer, audience, expiry)
// and its nonce must be this sign-in's. A verified email then signs in
// as its person (store.SignInWithEmail), or is refused with whom to ask.
func (u *UI) handleOIDCCallback(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: oidcCookie, Value: "", Path: "/ui/signin/oidc", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: u.secureCookies(r)})
	f, ok := flightOf(r)
	q := r.URL.Query()
	switch {
	case !ok:
		u.oidcRefused(w, r, http.StatusForbidden, "sign-in refused: this browser did not start it, or it took longer than 10 minutes; try again")
		return
	case q.Get("error") != "":
		u.oidcRefused(w, r, http.StatusUnauthorized, "the identity provider refused the sign-in: "+q.Get("error")+" "+q.Get("error_description"))
		return
	case !hmac.Equal([]byte(q.Get("state")), []byte(f.State)):
		u.oidcRefused(w, r, http.StatusForbidden, "sign-in refused: the state the identity provider sent back is not this sign-in's; try again")
		return
	}
	email, err := u.verifiedEmail(r, f, q.Get("code"))
	if err != nil {
		u.log.Warn("oidc sign-in refused", "err", err)
		u.oidcRefused(w, r, http.StatusForbidden, "sign-in refused: "+err.Error())
		return
	}
	id, sess, err := u.st.SignInWithEmail(r.Context(), email, u.sessionTTL(r))
	if err != nil {
		u.notInvited(w, r, email, err)
		return
	}
	u.setSession(w, r, id, sess)
	// A page, not a redirect: the session cookie is SameSite=Strict, and a
	// browser leaves it off a redirect in a chain the provider's site began.
	w.Header().Set("Cache-Control", "no-store")
	u.render(w, r, http.StatusOK, "signedin", pageData{Title: "Signed in", Refresh: f.Next, Body: f.Next})
}

// verifiedEmail exchanges the code and checks the ID token.
func (u *UI) verifiedEmail(r *http.Request, f oidcFlight, code string) (string, error) {
	c, err := u.oidcClientFor(r)
	if err != nil {
		return "", err
	}
	tok, err := c.oauth.Exchange(c.ctx, code, oauth2.VerifierOption(f.Verifier))
	if err != nil {
		return "", fmt.Errorf("the identity provider did not exchange the code: %w", err)
	}
	raw, ok := tok.Extra("id_token").(string)
	if !ok || raw == "" {
		return "", errors.New("the identity provider sent no ID token")
	}
	idt, err := c.provider.Verifier(&oidc.Config{ClientID: c.oauth.ClientID}).Verify(c.ctx, raw)
	if err != nil {
		return "", fmt.Errorf("the ID token does not verify: %w", err)
	}
	if !hmac.Equal([]byte(idt.Nonce), []byte(f.Nonce)) {
		return "", errors.New("the ID token's nonce is not this sign-in's")
	}
	var claims struct {
		Email    string `json:"email"`
		Verified *bool  `json:"email_verified"`
	}
	if err := idt.Claims(&claims); err != nil {
		return "", fmt.Errorf("the ID token's claims: %w", err)
	}
	if claims.Email == "" || claims.Verified == nil || !*claims.Verified {
		return "", errors.New("the identity provider did not vouch for an email address (email_verified)")
	}
	return claims.Email, nil
}

// notInvited refuses an email that is no one's here, naming the admins
// who can invite it.
func (u *UI) notInvited(w http.ResponseWriter, r *http.Request, email string, err error) {
	if !errors.Is(err, store.ErrNotInvited) && !errors.Is(err, store.ErrInviteExpired) && !errors.Is(err, store.ErrInviteRevoked) {
		u.log.Error("oidc sign-in", "err", err)
		u.oidcRefused(w, r, u.cfg.Status(err), "sign-in failed: the server could not open a session; see its log")
		return
	}
	admins, aerr := u.st.Admins(r.Context())
	if aerr != nil {
		u.log.Error("list admins", "err", aerr)
	}
	names := make([]string, len(admins))
	for i, a := range admins {
		names[i] = a.Name + " (" + a.ID + ")"
	}
	msg := ""
	for _, e := range []error{store.ErrNotInvited, store.ErrInviteExpired, store.ErrInviteRevoked} {
		if errors.Is(err, e) {
			msg = strings.TrimSuffix(e.Error(), ": "+domain.ErrForbidden.Error())
		}
	}
	u.oidcRefused(w, r, http.StatusForbidden, fmt.Sprintf("%s is not signed in: %s. An admin can invite you: %s.", email, msg, strings.Join(names, ", ")))
}

func (u *UI) oidcRefused(w http.ResponseWriter, r *http.Request, status int, msg string) {
	u.showSignIn(w, r, status, signInPage{Next: "/ui/", Error: msg})
}

func flightOf(r *http.Request) (oidcFlight, bool) {
	c, err := r.Cookie(oidcCookie)
	if err != nil {
		return oidcFlight{}, false
	}
	raw, err := base64.RawURLEncoding.DecodeString(c.Value)
	var f oidcFlight
	if err != nil || json.Unmarshal(raw, &f) != nil || f.State == "" || f.Nonce == "" || f.Verifier == "" {
		return oidcFlight{}, false
	}
	f.Next = localPath(f.Next)
	return f, true
}

func randomValue() string {
	raw := make([]byte, 32)
	rand.Read(raw)
	return base64.RawURLEncoding.EncodeToString(raw)
}

// endSessionURL is where signing out of an OIDC session goes next: the
// provider's end_session_endpoint when it advertises one, "" otherwise.
func (u *UI) endSessionURL(r *http.Request) string {
	c, err := u.oidcClientFor(r)
	if err != nil {
		return ""
	}
	var meta struct {
		EndSession string `json:"end_session_endpoint"`
	}
	if err := c.provider.Claims(&meta); err != nil || meta.EndSession == "" {
		return ""
	}
	end, err := url.Parse(meta.EndSession)
	if err != nil || (end.Scheme != "https" && end.Scheme != "http") {
		return ""
	}
	q := end.Query()
	q.Set("client_id", c.oauth.ClientID)
	q.Set("post_logout_redirect_uri", u.baseURL(r)+"/ui/signin")
	end.RawQuery = q.Encode()
	return end.String()
}
