package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/helixml/helix-org/server"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/tools"
)

// redirectURI is the test client's: a loopback listener nobody needs to
// run, since the browser below stops at the redirect and reads it.
const redirectURI = "http://127.0.0.1:47123/callback"

// TestMCPClientLogsIn: a client built on the go-sdk's OAuth support is
// given only the URL of Maya's endpoint. It finds the metadata from the
// 401's challenge, registers, sends Maya's browser (signed in with a
// one-time link) to the consent page, whose Allow answers with a code,
// trades the code for a token and lists Maya's tools with it. The token
// is refused on another worker's endpoint, and shows in Maya's token list.
func TestMCPClientLogsIn(t *testing.T) {
	h := servertest.Start(t, server.Config{})
	owner := h.Owner(t)
	seedOrg(t, h, owner)
	for _, tool := range []string{"publish", "read_events"} {
		servertest.Call[any](t, owner, "grant_tool", map[string]any{"worker": "w-maya", "tool": tool})
	}
	browser := signInWithLink(t, h, "w-maya")

	handler, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			ClientName: "Test MCP client", RedirectURIs: []string{redirectURI}, TokenEndpointAuthMethod: "none",
			GrantTypes: []string{"authorization_code", "refresh_token"}}},
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			q, err := consent(ctx, browser, args.URL, "allow")
			if err != nil {
				return nil, err
			}
			return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "oauth-test", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: h.URL("w-maya"), OAuthHandler: handler}, nil)
	if err != nil {
		t.Fatalf("connect by URL alone: %v", err)
	}
	defer cs.Close()
	got, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	want, err := h.Connect(t, "w-maya", servertest.Token(t, h.Store, "w-maya")).ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if names(got.Tools) == "" || names(got.Tools) != names(want.Tools) {
		t.Errorf("tools/list through the login = %s, want Maya's own %s", names(got.Tools), names(want.Tools))
	}

	ts, _ := handler.TokenSource(t.Context())
	tok, err := ts.Token()
	if err != nil {
		t.Fatal(err)
	}
	status, body := initialize(t, h.URL("w-owner"), tok.AccessToken)
	if status != http.StatusForbidden || !strings.Contains(body, "it was issued for the endpoint of w-maya ("+h.URL("w-maya")+"), not this one") {
		t.Errorf("Maya's token on the owner's endpoint: %d %s", status, body)
	}
	list, err := h.Store.ListTokens(t.Context(), store.TokenQuery{Worker: "w-maya"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(list, func(tk store.Token) bool { return tk.Kind == store.TokenOAuth && tk.Label == "oauth: Test MCP client" }) {
		t.Errorf("Maya's token list lacks the client's token: %+v", list)
	}
}

// TestOAuthRefusals follows the spec's flow by hand over HTTP, and tries
// each way a token request or a consent can be wrong.
func TestOAuthRefusals(t *testing.T) {
	h := servertest.Start(t, server.Config{})
	seedOrg(t, h, h.Owner(t))
	browser := signInWithLink(t, h, "w-maya")
	base, maya := h.Server.URL, h.URL("w-maya")

	// Discovery: the challenge names the metadata, which names the issuer.
	resp, err := http.Post(maya, "application/json", strings.NewReader(initializeBody))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	wantChallenge := `resource_metadata="` + base + `/.well-known/oauth-protected-resource/workers/w-maya/mcp"`
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), wantChallenge) {
		t.Fatalf("401 = %d, WWW-Authenticate %q, want %s", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), wantChallenge)
	}
	prm := getJSON[oauthex.ProtectedResourceMetadata](t, base+"/.well-known/oauth-protected-resource/workers/w-maya/mcp")
	root := getJSON[oauthex.ProtectedResourceMetadata](t, base+"/.well-known/oauth-protected-resource")
	asm := getJSON[oauthex.AuthServerMeta](t, base+"/.well-known/oauth-authorization-server")
	if prm.Resource != maya || root.Resource != base || prm.AuthorizationServers[0] != base || asm.Issuer != base ||
		!slices.Equal(asm.CodeChallengeMethodsSupported, []string{"S256"}) || asm.RegistrationEndpoint != base+"/oauth/register" {
		t.Fatalf("metadata: resource %+v, root %+v, server %+v", prm, root, asm)
	}
	client := register(t, base, redirectURI)

	verifier := oauth2.GenerateVerifier()
	authorize := func(resource string) string {
		q := url.Values{"response_type": {"code"}, "client_id": {client}, "redirect_uri": {redirectURI}, "state": {"st-1"},
			"code_challenge": {oauth2.S256ChallengeFromVerifier(verifier)}, "code_challenge_method": {"S256"}, "resource": {resource}}
		return base + "/ui/oauth/authorize?" + q.Encode()
	}
	code := func() string {
		q, err := consent(t.Context(), browser, authorize(maya), "allow")
		if err != nil {
			t.Fatal(err)
		}
		if q.Get("state") != "st-1" || q.Get("iss") != base || q.Get("code") == "" {
			t.Fatalf("consent answered %v", q)
		}
		return q.Get("code")
	}
	exchange := func(code, verifier, redirect, resource string) (int, map[string]any) {
		return postForm(t, base+"/oauth/token", url.Values{"grant_type": {"authorization_code"}, "client_id": {client}, "code": {code},
			"code_verifier": {verifier}, "redirect_uri": {redirect}, "resource": {resource}})
	}
	for _, tt := range []struct {
		name, verifier, redirect, resource, want string
	}{
		{"bad PKCE verifier", oauth2.GenerateVerifier(), redirectURI, maya, "code_verifier does not match the code_challenge"},
		{"verifier of the wrong form", "short", redirectURI, maya, "code_verifier must be 43 to 128 characters"},
		{"wrong redirect_uri", verifier, "http://127.0.0.1:47123/other", maya, `redirect_uri "http://127.0.0.1:47123/other" is not the one the code was issued for`},
		{"another resource", verifier, redirectURI, h.URL("w-owner"), "is not the one consented to"},
	} {
		st, got := exchange(code(), tt.verifier, tt.redirect, tt.resource)
		if st != http.StatusBadRequest || !strings.Contains(got["error_description"].(string), tt.want) {
			t.Errorf("%s: %d %v, want 400 saying %q", tt.name, st, got, tt.want)
		}
	}

	// A code works once; its second use revokes what the first gave.
	c := code()
	st, first := exchange(c, verifier, redirectURI, maya)
	if st != http.StatusOK {
		t.Fatalf("exchange: %d %v", st, first)
	}
	access := first["access_token"].(string)
	if st, _ := initialize(t, maya, access); st != http.StatusOK {
		t.Fatalf("the token does not work on Maya's endpoint: %d", st)
	}
	if st, got := exchange(c, verifier, redirectURI, maya); st != http.StatusBadRequest || got["error"] != "invalid_grant" ||
		!strings.Contains(got["error_description"].(string), "already used; the tokens it gave are revoked") {
		t.Errorf("reused code: %d %v", st, got)
	}
	if st, _ := initialize(t, maya, access); st != http.StatusUnauthorized {
		t.Errorf("the token of a replayed code still works: %d", st)
	}

	// Refresh tokens rotate; an old one presented again ends the grant.
	_, fresh := exchange(code(), verifier, redirectURI, maya)
	refresh := func(tok string) (int, map[string]any) {
		return postForm(t, base+"/oauth/token", url.Values{"grant_type": {"refresh_token"}, "client_id": {client}, "refresh_token": {tok}})
	}
	st, next := refresh(fresh["refresh_token"].(string))
	if st != http.StatusOK || next["refresh_token"] == fresh["refresh_token"] {
		t.Fatalf("refresh: %d %v", st, next)
	}
	if st, _ := initialize(t, maya, fresh["access_token"].(string)); st != http.StatusUnauthorized {
		t.Errorf("the access token a refresh replaced still works: %d", st)
	}
	if st, got := refresh(fresh["refresh_token"].(string)); st != http.StatusBadRequest || !strings.Contains(got["error_description"].(string), "already used") {
		t.Errorf("rotated refresh token again: %d %v", st, got)
	}
	if st, _ := initialize(t, maya, next["access_token"].(string)); st != http.StatusUnauthorized {
		t.Errorf("a replayed refresh token left its grant's newest token alive: %d", st)
	}

	// A client ends its own access (RFC 7009); another client may not,
	// and a token nobody knows is no error.
	_, gone := exchange(code(), verifier, redirectURI, maya)
	other := register(t, base, redirectURI)
	revoke := func(client, tok string) (int, string) {
		resp, err := http.PostForm(base+"/oauth/revoke", url.Values{"client_id": {client}, "token": {tok}})
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, bodyOf(t, resp)
	}
	if st, body := revoke(other, gone["refresh_token"].(string)); st != http.StatusUnauthorized || !strings.Contains(body, "issued to another client") {
		t.Errorf("another client's revocation: %d %s", st, body)
	}
	if st, _ := initialize(t, maya, gone["access_token"].(string)); st != http.StatusOK {
		t.Errorf("another client's refused revocation ended the token: %d", st)
	}
	for _, tok := range []string{gone["access_token"].(string), "hxr_unknown"} {
		if st, body := revoke(client, tok); st != http.StatusOK {
			t.Errorf("revoke %.8s…: %d %s", tok, st, body)
		}
	}
	if st, _ := initialize(t, maya, gone["access_token"].(string)); st != http.StatusUnauthorized {
		t.Errorf("a revoked token still works: %d", st)
	}
	if st, got := refresh(gone["refresh_token"].(string)); st != http.StatusBadRequest || got["error"] != "invalid_grant" {
		t.Errorf("the refresh token of a revoked grant: %d %v", st, got)
	}

	// The consent page: only a link or provider session, only for one's
	// own worker, only PKCE S256 and a registered redirect URI; a refusal
	// goes to the client once its redirect URI is known to be its own.
	tokenBrowser := signInWithToken(t, h, "w-maya")
	signedOut := &http.Client{CheckRedirect: browser.CheckRedirect}
	for _, tt := range []struct {
		name    string
		browser *http.Client
		change  url.Values
		status  int
		want    string // in the page, or the Location it redirects to
	}{
		{"another worker's endpoint", browser, url.Values{"resource": {h.URL("w-owner")}}, 403, "a person connects an MCP client only as themselves"},
		{"PKCE plain", browser, url.Values{"code_challenge_method": {"plain"}}, 303, redirectURI + "?error=invalid_request"},
		{"no PKCE", browser, url.Values{"code_challenge": {""}}, 303, redirectURI + "?error=invalid_request"},
		{"a state past 1 KiB", browser, url.Values{"state": {strings.Repeat("s", 1025)}}, 303, redirectURI + "?error=invalid_request&error_description=state+is+longer"},
		{"implicit flow", browser, url.Values{"response_type": {"token"}}, 303, redirectURI + "?error=unsupported_response_type"},
		{"a resource elsewhere", browser, url.Values{"resource": {"https://evil.example/workers/w-maya/mcp"}}, 303, redirectURI + "?error=invalid_target"},
		{"unknown client", browser, url.Values{"client_id": {"hxk_nobody"}}, 400, "is not registered here"},
		{"unregistered redirect_uri", browser, url.Values{"redirect_uri": {"http://127.0.0.1:47123/elsewhere"}}, 400, "is not one by hand registered"},
		{"another loopback port", browser, url.Values{"redirect_uri": {"http://127.0.0.1:50000/callback"}}, 200, "Connect by hand"},
		{"signed out", signedOut, nil, 303, "/ui/signin?next=%2Fui%2Foauth%2Fauthorize%3F"},
		{"a session from a pasted token", tokenBrowser, nil, 403, "this session began with a pasted token"},
	} {
		u, _ := url.Parse(authorize(maya))
		q := u.Query()
		for k, v := range tt.change {
			q[k] = v
		}
		u.RawQuery = q.Encode()
		resp, err := tt.browser.Get(u.String())
		if err != nil {
			t.Fatal(err)
		}
		got := html.UnescapeString(bodyOf(t, resp))
		if resp.StatusCode == http.StatusSeeOther {
			got = resp.Header.Get("Location")
		}
		if resp.StatusCode != tt.status || !strings.Contains(got, tt.want) {
			t.Errorf("%s: %d %s, want %d with %q", tt.name, resp.StatusCode, got, tt.status, tt.want)
		}
	}
	form := url.Values{"client_id": {client}, "redirect_uri": {redirectURI}, "response_type": {"code"}, "decision": {"allow"},
		"code_challenge": {oauth2.S256ChallengeFromVerifier(verifier)}, "code_challenge_method": {"S256"}, "resource": {maya}}
	resp, err = browser.PostForm(base+"/ui/oauth/authorize", form)
	if err != nil {
		t.Fatal(err)
	}
	if page := bodyOf(t, resp); resp.StatusCode != http.StatusForbidden || !strings.Contains(page, "CSRF") {
		t.Errorf("consent without its CSRF token: %d %s", resp.StatusCode, page)
	}
	if q, err := consent(t.Context(), browser, authorize(maya), "deny"); err != nil || q.Get("error") != "access_denied" {
		t.Errorf("denied consent answered %v, %v", q, err)
	}
}

// TestOAuthRegistration: registration is open, so every field is
// checked and bounded; a refusal names the field.
func TestOAuthRegistration(t *testing.T) {
	h := servertest.Start(t, server.Config{})
	for _, tt := range []struct {
		name, body string
		status     int
		want       string
	}{
		{"loopback http", `{"redirect_uris":["http://127.0.0.1:9/cb"],"client_name":"cli"}`, 201, `"token_endpoint_auth_method":"none"`},
		{"https", `{"redirect_uris":["https://app.example.com/cb"]}`, 201, `"client_name":"unnamed MCP client"`},
		{"plain http elsewhere", `{"redirect_uris":["http://app.example.com/cb"]}`, 400, "must use https, or http to a loopback address"},
		{"javascript", `{"redirect_uris":["javascript:alert(1)"]}`, 400, "invalid_redirect_uri"},
		{"fragment", `{"redirect_uris":["https://app.example.com/cb#x"]}`, 400, "must not have a fragment"},
		{"none", `{"client_name":"x"}`, 400, "redirect_uris must list 1 to 10 URIs, got 0"},
		{"implicit grant", `{"redirect_uris":["https://a.example/cb"],"grant_types":["implicit"]}`, 400, `grant_types: \"implicit\" is not supported`},
		{"not JSON", `redirect_uris=x`, 400, "invalid_client_metadata"},
		{"too big", `{"redirect_uris":["https://a.example/cb"],"client_name":"` + strings.Repeat("x", 20<<10) + `"}`, 400, "at most 16384 bytes"},
	} {
		resp, err := http.Post(h.Server.URL+"/oauth/register", "application/json", strings.NewReader(tt.body))
		if err != nil {
			t.Fatal(err)
		}
		if got := bodyOf(t, resp); resp.StatusCode != tt.status || !strings.Contains(got, tt.want) {
			t.Errorf("%s: %d %s, want %d with %q", tt.name, resp.StatusCode, got, tt.status, tt.want)
		}
	}
}

// signInWithLink signs a person in as a browser would: a one-time link,
// its form, and the session cookie it sets. The browser stops at
// redirects, so a consent's answer can be read from its Location.
func signInWithLink(t *testing.T, h *servertest.Harness, worker string) *http.Client {
	t.Helper()
	link, err := h.Store.CreateSignInCode(t.Context(), servertest.Token(t, h.Store, worker), store.SignInCodeTTL)
	if err != nil {
		t.Fatal(err)
	}
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := browser.Get(h.Server.URL + "/ui/signin?code=" + url.QueryEscape(link))
	if err != nil {
		t.Fatal(err)
	}
	resp, err = browser.PostForm(h.Server.URL+"/ui/signin", hiddenFields(bodyOf(t, resp)))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Body.Close(); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign in with a link: %d", resp.StatusCode)
	}
	return browser
}

// signInWithToken signs a person in by pasting an operator token into
// the sign-in form: a weaker session than a link's.
func signInWithToken(t *testing.T, h *servertest.Harness, worker string) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := browser.Get(h.Server.URL + "/ui/signin")
	if err != nil {
		t.Fatal(err)
	}
	form := hiddenFields(bodyOf(t, resp))
	form.Set("token", servertest.Token(t, h.Store, worker))
	resp, err = browser.PostForm(h.Server.URL+"/ui/signin", form)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Body.Close(); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign in with a token: %d", resp.StatusCode)
	}
	return browser
}

// consent opens the authorization URL in the signed-in browser, answers
// the consent form, and returns the query the client's redirect URI gets.
func consent(ctx context.Context, browser *http.Client, authURL, decision string) (url.Values, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	resp, err := browser.Do(req)
	if err != nil {
		return nil, err
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, errors.New("consent page: " + resp.Status + ": " + string(b))
	}
	form := hiddenFields(string(b))
	form.Set("decision", decision)
	u, _ := url.Parse(authURL)
	resp, err = browser.PostForm(u.Scheme+"://"+u.Host+"/ui/oauth/authorize", form)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc.String(), redirectURI) {
		return nil, errors.New("consent answered " + resp.Status + " to " + resp.Header.Get("Location"))
	}
	return loc.Query(), nil
}

var hiddenInput = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`)

func hiddenFields(page string) url.Values {
	v := url.Values{}
	for _, m := range hiddenInput.FindAllStringSubmatch(page, -1) {
		v.Add(m[1], html.UnescapeString(m[2]))
	}
	return v
}

func register(t *testing.T, base, redirect string) string {
	t.Helper()
	resp, err := http.Post(base+"/oauth/register", "application/json", strings.NewReader(`{"client_name":"by hand","redirect_uris":["`+redirect+`"]}`))
	if err != nil {
		t.Fatal(err)
	}
	var reg struct {
		ClientID string `json:"client_id"`
	}
	if err := json.Unmarshal([]byte(bodyOf(t, resp)), &reg); err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("register: %d %v", resp.StatusCode, err)
	}
	return reg.ClientID
}

func postForm(t *testing.T, u string, form url.Values) (int, map[string]any) {
	t.Helper()
	resp, err := http.PostForm(u, form)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(bodyOf(t, resp)), &out); err != nil {
		t.Fatalf("%s answered no JSON: %v", u, err)
	}
	return resp.StatusCode, out
}

func getJSON[T any](t *testing.T, u string) T {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	var out T
	if err := json.Unmarshal([]byte(bodyOf(t, resp)), &out); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", u, resp.StatusCode, err)
	}
	return out
}

// initialize sends an MCP initialize with a bearer token ("" for none).
func initialize(t *testing.T, endpoint, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, endpoint, strings.NewReader(initializeBody))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, bodyOf(t, resp)
}

func bodyOf(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func names(ts []*mcp.Tool) string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	slices.Sort(out)
	return strings.Join(out, ",")
}

// TestOAuthURLsFollowTheMount: every URL the authorization server hands
// out is built from where it was reached — auth.public_url, and the path
// an org is mounted under — so one handler set serves an org anywhere.
func TestOAuthURLsFollowTheMount(t *testing.T) {
	h := servertest.Start(t, server.Config{})
	mux := http.NewServeMux()
	mux.Handle("/orgs/acme/", http.StripPrefix("/orgs/acme", server.New(h.Store, server.Config{})))
	mux.Handle("/", server.New(h.Store, server.Config{}))
	mounted := httptest.NewServer(mux)
	t.Cleanup(mounted.Close)
	for _, tt := range []struct {
		name, at, asmAt, publicURL, wantBase string
	}{
		{"mounted under /orgs/acme", mounted.URL + "/orgs/acme", mounted.URL + "/orgs/acme/.well-known/oauth-authorization-server", "", mounted.URL + "/orgs/acme"},
		// RFC 8414's own form for an issuer with a path, answered at the root.
		{"its metadata by path insertion", mounted.URL + "/orgs/acme", mounted.URL + "/.well-known/oauth-authorization-server/orgs/acme", "", mounted.URL + "/orgs/acme"},
		{"behind auth.public_url", h.Server.URL, h.Server.URL + "/.well-known/oauth-authorization-server", "https://org.example.com", "https://org.example.com"},
	} {
		if err := h.Store.SetSetting(t.Context(), tools.PublicURLSetting, tt.publicURL); err != nil {
			t.Fatal(err)
		}
		asm := getJSON[oauthex.AuthServerMeta](t, tt.asmAt)
		prm := getJSON[oauthex.ProtectedResourceMetadata](t, tt.at+"/.well-known/oauth-protected-resource/workers/w-owner/mcp")
		resp, err := http.Post(tt.at+"/workers/w-owner/mcp", "application/json", strings.NewReader(initializeBody))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		got := []string{asm.Issuer, asm.AuthorizationEndpoint, asm.TokenEndpoint, prm.Resource, resp.Header.Get("WWW-Authenticate")}
		want := []string{tt.wantBase, tt.wantBase + "/ui/oauth/authorize", tt.wantBase + "/oauth/token", tt.wantBase + "/workers/w-owner/mcp",
			`Bearer realm="helix-org", resource_metadata="` + tt.wantBase + `/.well-known/oauth-protected-resource/workers/w-owner/mcp"`}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}
