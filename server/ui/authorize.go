package ui

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// The consent page of MCP clients that log in (server/oauth serves the
// rest of the authorization server). GET shows what the person is asked;
// POST, with the session's CSRF token, sends the browser back to the
// client with a code or with access_denied.

// authRequest is an authorization request (OAuth 2.1 §4.1.1) checked
// against the registered client and the signed-in person.
type authRequest struct {
	Client      store.OAuthClient
	RedirectURI string
	State       string
	Challenge   string
	Resource    string
	Worker      domain.Worker
	// Params are the request's own parameters, which the consent form
	// carries back.
	Params url.Values
}

// authRefusal is a request that cannot go on. Before the redirect URI is
// known good the person is shown a page; after, the client is told.
type authRefusal struct {
	status int
	msg    string
	code   string // OAuth error code, when the client is told
}

// maxStateBytes bounds the state a client asks to have sent back.
const maxStateBytes = 1024

// authParams are the parameters an authorization request may carry.
var authParams = []string{"client_id", "redirect_uri", "response_type", "state", "code_challenge", "code_challenge_method", "resource", "scope"}

// checkAuthRequest checks an authorization request, from the query of a
// GET or the form of the consent's POST, against the viewer.
func (u *UI) checkAuthRequest(r *http.Request, get func(string) string, v *viewer) (*authRequest, *authRefusal) {
	a := &authRequest{State: get("state"), Challenge: get("code_challenge"), Params: url.Values{}}
	for _, p := range authParams {
		if val := get(p); val != "" {
			a.Params.Set(p, val)
		}
	}
	c, err := u.st.OAuthClientByID(r.Context(), get("client_id"))
	if errors.Is(err, store.ErrOAuthClient) {
		return nil, &authRefusal{status: http.StatusBadRequest, msg: "refused: " + err.Error() + "; the MCP client must register again"}
	}
	if err != nil {
		return nil, &authRefusal{status: http.StatusInternalServerError, msg: err.Error()}
	}
	a.Client, a.RedirectURI = c, get("redirect_uri")
	if a.RedirectURI == "" && len(c.RedirectURIs) == 1 {
		a.RedirectURI = c.RedirectURIs[0]
	}
	if !c.AllowsRedirect(a.RedirectURI) {
		return nil, &authRefusal{status: http.StatusBadRequest, msg: "refused: redirect_uri " + quoteValue(a.RedirectURI) + " is not one " + c.Name + " registered"}
	}
	switch {
	case get("response_type") != "code":
		return a, &authRefusal{code: "unsupported_response_type", msg: "response_type must be code"}
	case a.Challenge == "" || get("code_challenge_method") != "S256":
		return a, &authRefusal{code: "invalid_request", msg: "PKCE is required: code_challenge with code_challenge_method S256"}
	case len(a.Challenge) != 43:
		return a, &authRefusal{code: "invalid_request", msg: "code_challenge must be the 43-character base64url SHA-256 of the verifier"}
	case len(a.State) > maxStateBytes:
		a.State = ""
		return a, &authRefusal{code: "invalid_request", msg: "state is longer than 1024 bytes"}
	}
	return u.checkAuthTarget(r, get("resource"), v, a)
}

// checkAuthTarget decides whose endpoint the token is for. A person
// connects a client only as themselves: the resource is their own
// worker's endpoint, or the server as a whole (then it is theirs too).
func (u *UI) checkAuthTarget(r *http.Request, resource string, v *viewer, a *authRequest) (*authRequest, *authRefusal) {
	base := BaseURL(u.st, r)
	worker := v.Worker.ID
	switch id, ok := strings.CutPrefix(resource, base+"/workers/"); {
	case resource == "" || resource == base:
	case ok && strings.HasSuffix(id, "/mcp") && !strings.Contains(strings.TrimSuffix(id, "/mcp"), "/"):
		worker = strings.TrimSuffix(id, "/mcp")
	default:
		return a, &authRefusal{code: "invalid_target", msg: "resource " + quoteValue(resource) + " is not a worker's MCP endpoint on this server (" + base + "/workers/<id>/mcp)"}
	}
	if worker != v.Worker.ID {
		return nil, &authRefusal{status: http.StatusForbidden, msg: "refused: you are signed in as " + v.Worker.ID + ", and a person connects an MCP client only as themselves; " +
			worker + "'s endpoint is not yours. Connect the client to " + domain.MCPURL(base, v.Worker.ID) + " instead."}
	}
	if !v.Session.Strong() {
		return nil, &authRefusal{status: http.StatusForbidden, msg: "refused: this session began with a pasted token; sign in with your identity provider or a one-time link (helix-org token create prints one) to connect an MCP client"}
	}
	a.Worker, a.Resource = v.Worker, resource
	if a.Resource == "" {
		a.Resource = domain.MCPURL(base, worker)
	}
	return a, nil
}

// consentPage is what the person is asked.
type consentPage struct {
	*authRequest
	Endpoint string
	// RedirectHost is where the browser goes next, to show the person.
	RedirectHost string
}

// handleAuthorize shows the consent page.
func (u *UI) handleAuthorize(w http.ResponseWriter, r *http.Request, v *viewer) {
	a, bad := u.checkAuthRequest(r, r.URL.Query().Get, v)
	if bad != nil {
		u.refuseAuth(w, r, v, a, bad)
		return
	}
	ru, _ := url.Parse(a.RedirectURI)
	// The consent form's answer is a redirect to the client: the policy
	// that lets forms post only here must let that one through.
	w.Header().Set("Content-Security-Policy", strings.Replace(contentSecurityPolicy, "form-action 'self'", "form-action 'self' "+ru.Scheme+"://"+ru.Host, 1))
	u.render(w, r, http.StatusOK, "authorize", pageData{Title: "Connect " + a.Client.Name, V: v,
		Body: consentPage{authRequest: a, Endpoint: domain.MCPURL(BaseURL(u.st, r), a.Worker.ID), RedirectHost: ru.Host}})
}

// handleConsent records the person's answer and sends the browser back
// to the client.
func (u *UI) handleConsent(w http.ResponseWriter, r *http.Request, v *viewer) {
	a, bad := u.checkAuthRequest(r, r.PostFormValue, v)
	if bad != nil {
		u.refuseAuth(w, r, v, a, bad)
		return
	}
	if r.PostFormValue("decision") != "allow" {
		u.redirectAuth(w, r, a, url.Values{"error": {"access_denied"}, "error_description": {v.Worker.ID + " did not allow " + a.Client.Name}})
		return
	}
	code, err := u.st.CreateOAuthCode(r.Context(), store.OAuthConsent{ClientID: a.Client.ID, WorkerID: a.Worker.ID, RedirectURI: a.RedirectURI,
		Challenge: a.Challenge, Resource: a.Resource})
	if err != nil {
		u.fail(w, r, v, err)
		return
	}
	u.redirectAuth(w, r, a, url.Values{"code": {code}})
}

// refuseAuth shows a refusal to the person, or sends it to the client
// once its redirect URI is known to be its own.
func (u *UI) refuseAuth(w http.ResponseWriter, r *http.Request, v *viewer, a *authRequest, bad *authRefusal) {
	if bad.code != "" && a != nil {
		u.redirectAuth(w, r, a, url.Values{"error": {bad.code}, "error_description": {bad.msg}})
		return
	}
	u.renderError(w, r, v, bad.status, bad.msg)
}

// redirectAuth sends the browser to the client's redirect URI with the
// answer, the request's state and the issuer (RFC 9207).
func (u *UI) redirectAuth(w http.ResponseWriter, r *http.Request, a *authRequest, answer url.Values) {
	ru, err := url.Parse(a.RedirectURI)
	if err != nil {
		u.renderError(w, r, nil, http.StatusBadRequest, "refused: redirect_uri is not a URL")
		return
	}
	q := ru.Query()
	for k, vs := range answer {
		q[k] = vs
	}
	if a.State != "" {
		q.Set("state", a.State)
	}
	q.Set("iss", BaseURL(u.st, r))
	ru.RawQuery = q.Encode()
	http.Redirect(w, r, ru.String(), http.StatusSeeOther)
}

func quoteValue(s string) string {
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return `"` + s + `"`
}
