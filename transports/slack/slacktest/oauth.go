package slacktest

import (
	"net/http"
	"net/url"
	"strconv"
)

// oauthApp is the fake's app for the OAuth v2 install.
type oauthApp struct {
	clientID, clientSecret, redirect string
	codes                            map[string]bool
	issued                           int
	// Authorized is what the last authorize request asked for.
	authorized url.Values
}

// OAuthApp registers the app the install flow installs: its client id and
// secret, and the redirect URL it lists.
func (s *Server) OAuthApp(clientID, clientSecret, redirectURL string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.oauth = oauthApp{clientID: clientID, clientSecret: clientSecret, redirect: redirectURL, codes: map[string]bool{}}
}

// AuthorizeURL is where the app sends a person to install it, as
// transport.slack's oauth_url takes it.
func (s *Server) AuthorizeURL() string { return s.base + "/oauth/v2/authorize" }

// Authorized returns the query of the last authorize request.
func (s *Server) Authorized() url.Values {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.oauth.authorized
}

// authorize stands for Slack's install page with a person who approves at
// once: back to the redirect URL with a code and the state.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.oauth.authorized = q
	redirect := s.oauth.redirect
	if q.Get("redirect_uri") != "" {
		redirect = q.Get("redirect_uri")
	}
	if q.Get("client_id") != s.oauth.clientID || redirect != s.oauth.redirect {
		http.Error(w, "invalid_client_id or bad_redirect_uri", http.StatusBadRequest)
		return
	}
	s.oauth.issued++
	code := "code-" + strconv.Itoa(s.oauth.issued)
	s.oauth.codes[code] = true
	http.Redirect(w, r, redirect+"?"+url.Values{"code": {code}, "state": {q.Get("state")}}.Encode(), http.StatusFound)
}

// access is oauth.v2.access: a code, once, for the bot token.
func (s *Server) access(w http.ResponseWriter, r *http.Request) {
	r.ParseForm()
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	code := r.PostForm.Get("code")
	switch {
	case id != s.oauth.clientID:
		answer(w, http.StatusOK, map[string]any{"ok": false, "error": "invalid_client_id"})
	case secret != s.oauth.clientSecret:
		answer(w, http.StatusOK, map[string]any{"ok": false, "error": "bad_client_secret"})
	case !s.oauth.codes[code]:
		answer(w, http.StatusOK, map[string]any{"ok": false, "error": "invalid_code"})
	case r.PostForm.Get("redirect_uri") != "" && r.PostForm.Get("redirect_uri") != s.oauth.redirect:
		answer(w, http.StatusOK, map[string]any{"ok": false, "error": "bad_redirect_uri"})
	default:
		delete(s.oauth.codes, code)
		answer(w, http.StatusOK, map[string]any{"ok": true, "access_token": s.token, "token_type": "bot",
			"scope":       "app_mentions:read,channels:history,groups:history,im:history,mpim:history,chat:write",
			"bot_user_id": "U0BOT", "app_id": "A0APP", "team": map[string]any{"name": "Acme", "id": "T0TEAM"},
			"enterprise": nil, "authed_user": map[string]any{"id": "U0OWNER"}, "is_enterprise_install": false})
	}
}
