package ui_test

import (
	"crypto/tls"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/server/ui"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

// orgState is what a refused request must leave untouched.
type orgState struct {
	LastSeq int64
	Roles   int
}

func stateOf(t *testing.T, st *store.Store) orgState {
	t.Helper()
	seq, err := st.LastSeq(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	roles, err := st.ListRoles(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return orgState{LastSeq: seq, Roles: len(roles)}
}

// withMaya adds a human worker who may read the chart but not change it.
func withMaya(t *testing.T, o *org) {
	t.Helper()
	o.call(t, "create_role", map[string]any{"id": "r-staff", "title": "Staff", "content": "Work."})
	o.call(t, "create_position", map[string]any{"id": "p-staff", "role": "r-staff", "title": "Staff 1"})
	o.call(t, "hire_worker", map[string]any{"id": "w-maya", "position": "p-staff", "kind": "human", "name": "Maya",
		"grants": []string{"list_positions", "list_roles", "list_workers", "read_events"}})
}

// TestWritesAreGuarded: every way a write can be forged is refused, with
// a status and a page that say why, and the org is unchanged; the same
// form with everything right goes through.
func TestWritesAreGuarded(t *testing.T) {
	t.Parallel()
	o := newOrg(t)
	withMaya(t, o)
	owner := o.client(t, "w-owner")
	maya := o.client(t, "w-maya")
	role := url.Values{"title": {"Forged"}, "content": {"x"}, "next": {"/ui/"}}
	with := func(c *client, extra url.Values) url.Values {
		f := url.Values{}
		for k, v := range role {
			f[k] = v
		}
		f.Set("csrf", c.csrf)
		for k, v := range extra {
			f[k] = v
		}
		return f
	}
	tests := []struct {
		name       string
		c          *client
		form       url.Values
		header     http.Header
		wantStatus int
		wantBody   string
	}{
		{"no CSRF token", owner, role, nil, 403, "missing its CSRF token or carries a wrong one"},
		{"another session's CSRF token", owner, with(maya, nil), nil, 403, "missing its CSRF token or carries a wrong one"},
		{"cross-origin, by Sec-Fetch-Site", owner, with(owner, nil), http.Header{"Sec-Fetch-Site": {"cross-site"}}, 403, "cross-origin request refused"},
		{"same site, other origin (another port)", owner, with(owner, nil), http.Header{"Sec-Fetch-Site": {"same-site"}}, 403, "cross-origin request refused"},
		{"cross-origin, by Origin", owner, with(owner, nil), http.Header{"Origin": {"http://evil.example"}}, 403, "cross-origin request refused"},
		{"no grant for the tool", maya, with(maya, nil), nil, 403, `missing grant: worker w-maya does not hold grant &#34;create_role&#34;`},
		{"signed out", &client{Client: &http.Client{}, base: o.base}, with(owner, nil), nil, 401, "not signed in"},
		{"unknown tool", owner, with(owner, nil), nil, 400, ""},
	}
	before := stateOf(t, o.h.Store)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := "/ui/act/create_role"
			if tt.name == "unknown tool" {
				path = "/ui/act/launch_rockets"
			}
			status, body := tt.c.post(t, path, tt.form, tt.header)
			if status != tt.wantStatus {
				t.Fatalf("status %d, want %d:\n%s", status, tt.wantStatus, body)
			}
			if !strings.Contains(body, tt.wantBody) {
				t.Errorf("page does not say %q:\n%s", tt.wantBody, body)
			}
		})
	}
	if diff := cmp.Diff(before, stateOf(t, o.h.Store)); diff != "" {
		t.Fatalf("refused writes changed the org (-before +after):\n%s", diff)
	}
	// The control: the same form, rightly sent, creates the role and
	// returns to the page it names.
	status, _ := owner.post(t, "/ui/act/create_role", with(owner, url.Values{"id": {"r-real"}, "next": {"/ui/roles/{id}"}}), nil)
	if status != http.StatusSeeOther || owner.location != "/ui/roles/r-real" {
		t.Fatalf("control: status %d to %q, want 303 to the new role's page", status, owner.location)
	}
	if _, err := o.h.Store.GetRole(t.Context(), "r-real"); err != nil {
		t.Fatalf("control did not create the role: %v", err)
	}
}

// TestToolErrorShownOnPage: a refused tool call re-renders the page the
// form came from, naming the cause, with what was typed still there.
func TestToolErrorShownOnPage(t *testing.T) {
	t.Parallel()
	o := newOrg(t)
	c := o.client(t, "w-owner")
	form := url.Values{"csrf": {c.csrf}, "back": {"/ui/"}, "next": {"/ui/roles/{id}"}, "id": {"r-Bad Id"}, "title": {"Typed title"}, "content": {"typed *content*"}}
	status, body := c.post(t, "/ui/act/create_role", form, nil)
	if status != http.StatusBadRequest {
		t.Fatalf("status %d, want 400", status)
	}
	for _, want := range []string{`role="alert">create_role: id:`, "Org chart", `value="Typed title"`, "typed *content*"} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

func TestSecurityHeaders(t *testing.T) {
	t.Parallel()
	o := newOrg(t)
	c := o.client(t, "w-owner")
	for _, path := range []string{"/ui/", "/ui/signin", "/ui/streams", "/ui/assets/app.js", "/ui/nope"} {
		resp, err := c.Get(o.base + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		for h, want := range map[string]string{
			"Content-Security-Policy": "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; object-src 'none'",
			"X-Frame-Options":         "DENY",
			"Referrer-Policy":         "no-referrer",
			"X-Content-Type-Options":  "nosniff",
		} {
			if got := resp.Header.Get(h); got != want {
				t.Errorf("%s: %s = %q, want %q", path, h, got, want)
			}
		}
	}
}

func TestRootAndRebinding(t *testing.T) {
	t.Parallel()
	o := newOrg(t)
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(o.base + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/ui/" {
		t.Errorf("GET / = %d to %q, want 302 to /ui/", resp.StatusCode, resp.Header.Get("Location"))
	}
	req, _ := http.NewRequest(http.MethodGet, o.base+"/ui/signin", nil)
	req.Host = "evil.example"
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("a rebound Host header got %d, want 403", resp.StatusCode)
	}
}

// TestSignIn covers the token form and the one-click link: who may sign
// in, what the cookie is like, and that a link works once and leaves the
// address bar at once.
func TestSignIn(t *testing.T) {
	t.Parallel()
	o := newOrg(t)
	withMaya(t, o)
	o.call(t, "hire_worker", map[string]any{"id": "w-bot", "position": "p-staff", "kind": "ai", "name": "Bot"})
	form := func(t *testing.T, token string, csrfOK bool) (int, *http.Response, string) {
		jar, _ := cookiejar.New(nil)
		c := &client{Client: &http.Client{Jar: jar}, base: o.base}
		_, page := c.get(t, "/ui/signin")
		csrf := between(page, `name="csrf" value="`, `"`)
		if !csrfOK {
			csrf = "forged"
		}
		c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		resp, err := c.PostForm(o.base+"/ui/signin", url.Values{"csrf": {csrf}, "token": {token}, "next": {"/ui/streams"}})
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp, string(b)
	}
	tests := []struct {
		name       string
		token      string
		csrfOK     bool
		wantStatus int
		wantBody   string
	}{
		{"owner's token", servertest.Token(t, o.h.Store, "w-owner"), true, 303, ""},
		{"a person's token", servertest.Token(t, o.h.Store, "w-maya"), true, 303, ""},
		{"an AI worker's token", servertest.Token(t, o.h.Store, "w-bot"), true, 403, "w-bot is an AI worker; only people sign in"},
		{"an unknown token", store.TokenPrefix + strings.Repeat("x", 43), true, 401, "invalid or expired token"},
		{"forged form", servertest.Token(t, o.h.Store, "w-owner"), false, 403, "sign-in form has expired or was sent from elsewhere"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, resp, body := form(t, tt.token, tt.csrfOK)
			if status != tt.wantStatus || !strings.Contains(body, tt.wantBody) {
				t.Fatalf("status %d, want %d with %q:\n%s", status, tt.wantStatus, tt.wantBody, body)
			}
			if status != 303 {
				return
			}
			if loc := resp.Header.Get("Location"); loc != "/ui/streams" {
				t.Errorf("redirect to %q, want the page asked for", loc)
			}
			c := sessionCookie(t, resp)
			if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/ui/" || c.Secure {
				t.Errorf("cookie %+v: want HttpOnly, SameSite=Strict, Path=/ui/, not Secure over plain HTTP", c)
			}
		})
	}

	t.Run("one-click link: opening it spends nothing, its button signs in once", func(t *testing.T) {
		link := o.signInLink(t, "w-owner")
		jar, _ := cookiejar.New(nil)
		noFollow := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		// A mail scanner, a prefetcher, a page that links to it: GETs.
		for range 3 {
			resp, err := noFollow.Get(link)
			if err != nil {
				t.Fatal(err)
			}
			page, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || hasSession(resp) || !strings.Contains(string(page), "Sign in with this link") ||
				resp.Header.Get("Cache-Control") != "no-store" {
				t.Fatalf("GET of the link: %d, session %v, no-store %q; want the page with its button and no session:\n%s",
					resp.StatusCode, hasSession(resp), resp.Header.Get("Cache-Control"), page)
			}
		}
		code := strings.TrimPrefix(link, o.base+"/ui/signin?code=")
		// A post from elsewhere: no matching form value, or another origin.
		for name, forged := range map[string]func() (*http.Response, error){
			"without the form's value": func() (*http.Response, error) {
				return noFollow.PostForm(o.base+"/ui/signin", url.Values{"code": {code}})
			},
			"from another origin": func() (*http.Response, error) {
				req, _ := http.NewRequest(http.MethodPost, o.base+"/ui/signin", strings.NewReader(url.Values{"code": {code}, "csrf": {"x"}}.Encode()))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				req.Header.Set("Origin", "https://evil.example")
				req.Header.Set("Sec-Fetch-Site", "cross-site")
				return noFollow.Do(req)
			},
		} {
			resp, err := forged()
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 403 || hasSession(resp) {
				t.Errorf("a forged post %s: %d, session %v; want 403 and none", name, resp.StatusCode, hasSession(resp))
			}
		}
		resp := signInByLink(t, noFollow, link)
		resp.Body.Close()
		if resp.StatusCode != 303 || resp.Header.Get("Location") != "/ui/" || sessionCookie(t, resp) == nil {
			t.Fatalf("the button: %d to %q; want 303 to /ui/ with a session", resp.StatusCode, resp.Header.Get("Location"))
		}
		resp = signInByLink(t, noFollow, link)
		page, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 401 || hasSession(resp) || !strings.Contains(string(page), store.ErrBadSignInCode.Error()) {
			t.Fatalf("the button again: %d with session %v; want 401, the code refused, no session:\n%s", resp.StatusCode, hasSession(resp), page)
		}
	})

	t.Run("revoking the token ends the session", func(t *testing.T) {
		tok := servertest.Token(t, o.h.Store, "w-maya")
		code, _ := o.h.Store.CreateSignInCode(t.Context(), tok, store.SignInCodeTTL)
		c := &client{Client: &http.Client{}, base: o.base}
		c.Jar, _ = cookiejar.New(nil)
		if resp := signInByLink(t, c.Client, o.base+"/ui/signin?code="+code); resp.StatusCode != 200 {
			t.Fatalf("sign in: %d", resp.StatusCode)
		}
		if status, body := c.get(t, "/ui/streams"); status != 200 || !strings.Contains(body, "Streams") {
			t.Fatalf("signed in: %d", status)
		}
		if err := o.h.Store.RevokeToken(t.Context(), tok); err != nil {
			t.Fatal(err)
		}
		if status, body := c.get(t, "/ui/streams"); status != 200 || !strings.Contains(body, `action="/ui/signin"`) {
			t.Errorf("after revoking: %d, want the sign-in form", status)
		}
	})

	t.Run("sign-out ends the session in the database", func(t *testing.T) {
		c := o.client(t, "w-owner")
		var sid string
		for _, ck := range c.Jar.Cookies(mustURL(o.base + "/ui/")) {
			if ck.Name == "helix_session" {
				sid = ck.Value
			}
		}
		if status, _ := c.post(t, "/ui/signout", url.Values{"csrf": {c.csrf}}, nil); status != 303 {
			t.Fatalf("sign out: %d", status)
		}
		if _, err := o.h.Store.VerifySession(t.Context(), sid); err != store.ErrNoSession {
			t.Errorf("session after sign-out: %v, want ErrNoSession", err)
		}
	})
}

// TestSecureCookie: over TLS, or with ui.secure_cookies, the session
// cookie is Secure.
func TestSecureCookie(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	if _, err := st.Bootstrap(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	srv := server.New(st, server.Config{Settings: ui.Settings})
	for _, tc := range []struct {
		name    string
		tls     bool
		setting bool
	}{{"over TLS", true, false}, {"behind a TLS proxy", false, true}} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.setting {
				if err := st.SetSetting(t.Context(), ui.SecureCookiesSetting, "true"); err != nil {
					t.Fatal(err)
				}
			}
			hs := httptest.NewUnstartedServer(srv)
			if tc.tls {
				hs.StartTLS()
			} else {
				hs.Start()
			}
			defer hs.Close()
			code, err := st.CreateSignInCode(t.Context(), servertest.Token(t, st, "w-owner"), store.SignInCodeTTL)
			if err != nil {
				t.Fatal(err)
			}
			jar, _ := cookiejar.New(nil)
			c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, Jar: jar,
				CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			resp := signInByLink(t, c, hs.URL+"/ui/signin?code="+code)
			resp.Body.Close()
			if ck := sessionCookie(t, resp); ck == nil || !ck.Secure {
				t.Errorf("cookie %+v, want Secure", ck)
			}
		})
	}
}

// TestSettingsPage: only the owner sees config; secrets stay redacted;
// set and clear go through the same validation as helix-org config.
func TestSettingsPage(t *testing.T) {
	t.Parallel()
	secret := domain.SettingSpec{Key: "test.api_key", Type: domain.SettingString, Secret: true, Description: "a key"}
	limit := domain.SettingSpec{Key: "test.limit", Type: domain.SettingInt, Default: "4", Description: "a limit"}
	st := storetest.New(t)
	h := servertest.StartWith(t, st, server.Config{Settings: domain.Settings{secret, limit, ui.SessionTTLSetting}})
	o := &org{h: h, owner: h.Owner(t), base: h.Server.URL}
	withMaya(t, o)
	if err := st.SetSetting(t.Context(), secret, "sk-very-secret"); err != nil {
		t.Fatal(err)
	}
	owner := o.client(t, "w-owner")
	status, page := owner.get(t, "/ui/settings")
	if status != 200 || strings.Contains(page, "sk-very-secret") || !strings.Contains(page, "test.limit") || !strings.Contains(page, domain.Redacted) {
		t.Fatalf("settings page: %d; want every key, the secret redacted:\n%s", status, page)
	}
	if status, body := o.client(t, "w-maya").get(t, "/ui/settings"); status != 403 || !strings.Contains(body, "member may not see operational settings") {
		t.Errorf("a member got %d", status)
	}
	set := func(key, op, value string) (int, string) {
		return owner.post(t, "/ui/settings", url.Values{"csrf": {owner.csrf}, "key": {key}, "op": {op}, "value": {value}}, nil)
	}
	if status, body := set("test.limit", "set", "lots"); status != 400 || !strings.Contains(body, `test.limit: &#34;lots&#34; is not an integer`) {
		t.Errorf("bad int: %d\n%s", status, body)
	}
	if status, body := set("test.nope", "set", "1"); status != 400 || !strings.Contains(body, `unknown config key &#34;test.nope&#34;`) {
		t.Errorf("unknown key: %d\n%s", status, body)
	}
	if status, body := set("test.api_key", "set", domain.Redacted); status != 400 || !strings.Contains(body, "still holds the mask") {
		t.Errorf("mask sent back: %d\n%s", status, body)
	}
	if got, _, _ := st.Setting(t.Context(), "test.api_key"); got != "sk-very-secret" {
		t.Fatalf("a refused set changed the secret to %q", got)
	}
	if status, _ := set("test.limit", "set", "8"); status != 303 {
		t.Errorf("set: %d", status)
	}
	if got, _, _ := st.Setting(t.Context(), "test.limit"); got != "8" {
		t.Errorf("test.limit = %q after set, want 8", got)
	}
	if status, _ := set("test.api_key", "clear", ""); status != 303 {
		t.Errorf("clear: %d", status)
	}
	if _, ok, _ := st.Setting(t.Context(), "test.api_key"); ok {
		t.Errorf("test.api_key still set after clear")
	}
}

func hasSession(resp *http.Response) bool {
	return slices.ContainsFunc(resp.Cookies(), func(c *http.Cookie) bool { return c.Name == "helix_session" })
}

func sessionCookie(t *testing.T, resp *http.Response) *http.Cookie {
	t.Helper()
	for _, c := range resp.Cookies() {
		if c.Name == "helix_session" {
			return c
		}
	}
	t.Fatalf("no session cookie in %v", resp.Header["Set-Cookie"])
	return nil
}

func between(s, start, end string) string {
	_, after, ok := strings.Cut(s, start)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(after, end)
	return v
}

func mustURL(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return u
}

// TestSettingsNeedASignInLink: an owner signed in with a token alone — a
// token an agent's MCP config may hold — sees settings but cannot change
// them; the refusal says how to, and nothing is stored.
func TestSettingsNeedASignInLink(t *testing.T) {
	t.Parallel()
	limit := domain.SettingSpec{Key: "test.limit", Type: domain.SettingInt, Default: "4", Description: "a limit"}
	st := storetest.New(t)
	h := servertest.StartWith(t, st, server.Config{Settings: domain.Settings{limit, ui.SessionTTLSetting}})
	o := &org{h: h, owner: h.Owner(t), base: h.Server.URL}

	jar, _ := cookiejar.New(nil)
	c := &client{Client: &http.Client{Jar: jar}, base: o.base}
	_, form := c.get(t, "/ui/signin")
	resp, err := c.PostForm(o.base+"/ui/signin", url.Values{"csrf": {between(form, `name="csrf" value="`, `"`)},
		"token": {servertest.Token(t, st, "w-owner")}, "next": {"/ui/settings"}})
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(page), "settings are read-only here") || strings.Contains(string(page), `action="/ui/settings"`) {
		t.Fatalf("settings after a token sign-in: %d; want the values read-only, no form:\n%s", resp.StatusCode, page)
	}
	c.csrf = between(string(page), `<meta name="csrf-token" content="`, `"`)
	status, body := c.post(t, "/ui/settings", url.Values{"csrf": {c.csrf}, "key": {"test.limit"}, "op": {"set"}, "value": {"9"}}, nil)
	if status != 403 || !strings.Contains(body, "or a one-time link") {
		t.Errorf("a token-only session set config: %d\n%s", status, body)
	}
	if _, set, _ := st.Setting(t.Context(), "test.limit"); set {
		t.Errorf("test.limit was stored by a token-only session")
	}
	owner := o.client(t, "w-owner")
	if status, _ := owner.post(t, "/ui/settings", url.Values{"csrf": {owner.csrf}, "key": {"test.limit"}, "op": {"set"}, "value": {"9"}}, nil); status != 303 {
		t.Errorf("a sign-in-link session: set answered %d, want 303", status)
	}
}
