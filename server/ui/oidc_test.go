package ui_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/oauth2-proxy/mockoidc"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server/ui"
	"github.com/helixml/helix-org/server/ui/uitest"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/tools"
	"github.com/helixml/helix-org/transports/email"
	"github.com/helixml/helix-org/transports/email/postmarktest"
)

// provider is a real OpenID Connect provider on loopback (mockoidc:
// discovery, authorization code with PKCE, RS256 ID tokens, JWKS) that a
// test can make misbehave: tamper rewrites the next authorization
// request's "state" or "nonce", endSession advertises a logout endpoint.
type provider struct {
	*mockoidc.MockOIDC
	tamper     atomic.Value // string: "", "state" or "nonce"
	endSession atomic.Bool
}

// withProvider starts a provider and points the org's sign-in at it.
func withProvider(t *testing.T, o *org) *provider {
	t.Helper()
	m, err := mockoidc.NewServer(nil)
	if err != nil {
		t.Fatal(err)
	}
	p := &provider{MockOIDC: m}
	p.tamper.Store("")
	m.AddMiddleware(p.middleware) // before Start, which chains them
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Start(ln, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Shutdown() })
	cfg := m.Config()
	set := func(spec domain.SettingSpec, v string) {
		if err := o.h.Store.SetSetting(t.Context(), spec, v); err != nil {
			t.Fatal(err)
		}
	}
	set(tools.OIDCIssuerSetting, cfg.Issuer)
	set(tools.OIDCClientIDSetting, cfg.ClientID)
	set(tools.OIDCClientSecretSetting, cfg.ClientSecret)
	set(ui.OIDCNameSetting, "Acme ID")
	set(ui.OIDCAllowPrivateSetting, "true")
	set(tools.PublicURLSetting, o.base)
	return p
}

func (p *provider) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == mockoidc.AuthorizationEndpoint {
			if field := p.tamper.Swap("").(string); field != "" {
				q := r.URL.Query()
				q.Set(field, "forged-"+field)
				r.URL.RawQuery = q.Encode()
			}
		}
		if r.URL.Path == mockoidc.DiscoveryEndpoint && p.endSession.Load() {
			rec := httptest.NewRecorder()
			next.ServeHTTP(rec, r)
			var doc map[string]any
			json.Unmarshal(rec.Body.Bytes(), &doc)
			doc["end_session_endpoint"] = p.Issuer() + "/logout"
			json.NewEncoder(w).Encode(doc)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (p *provider) user(email string, verified bool) {
	p.QueueUser(&mockoidc.MockUser{Subject: "sub-" + email, Email: email, EmailVerified: verified})
}

// signInWithProvider opens the sign-in page in a fresh tab, presses
// "Sign in with Acme ID", and answers the worker the tab is signed in as,
// or the error the sign-in page shows.
func signInWithProvider(t *testing.T, o *org, from string) (worker, refusal string) {
	t.Helper()
	tab := uitest.Tab(t)
	uitest.Do(t, tab, chromedp.Navigate(from), chromedp.Click(chromedp.CSS(`a[href^="/ui/signin/oidc"]`)),
		chromedp.WaitVisible(chromedp.CSS(`header.top nav, .flash.error`)))
	if uitest.Run(t, tab, chromedp.Evaluate[int](`document.querySelectorAll(".flash.error").length`)) > 0 {
		return "", uitest.Run(t, tab, chromedp.Evaluate[string](`document.querySelector(".flash.error").textContent`))
	}
	path := uitest.Run(t, tab, chromedp.Evaluate[string](`location.pathname`))
	if path != "/ui/" {
		t.Errorf("signed in on %s, want the org page /ui/", path)
	}
	return uitest.Run(t, tab, chromedp.Evaluate[string](`document.querySelector("header .me .who").title`)), ""
}

// TestOIDCSignIn: a browser signs in with the identity provider and lands
// on the org page as the person the verified email belongs to; an email
// nobody invited, an expired or revoked invitation, a forged state or
// nonce and an unverified email are refused, each with a page saying why.
func TestOIDCSignIn(t *testing.T) {
	t.Parallel()
	o := newOrg(t)
	withMaya(t, o)
	p := withProvider(t, o)
	invite := func(email string) string {
		return o.call(t, "invite", map[string]any{"email": email, "position": "p-staff", "role": "member"})["worker"].(string)
	}
	tests := []struct {
		name  string
		setup func(t *testing.T) string // the worker expected, if any
		email string
		// unverified makes the provider not vouch for the email.
		unverified bool
		tamper     string
		want       string // the refusal, "" for a sign-in
	}{
		{name: "invited email binds its worker", email: "lee@example.com", setup: func(t *testing.T) string { return invite("lee@example.com") }},
		{name: "the bound person signs in again", email: "lee@example.com", setup: func(t *testing.T) string { return "w-lee" }},
		{name: "unknown email", email: "stranger@example.com", want: "stranger@example.com is not signed in: this email belongs to no one in the organisation and has no invitation. An admin can invite you:"},
		{name: "revoked invitation", email: "rev@example.com", want: "your invitation was revoked",
			setup: func(t *testing.T) string {
				invite("rev@example.com")
				id := o.call(t, "list_invitations", nil)["invitations"].([]any)[0].(map[string]any)["id"]
				o.call(t, "revoke_invitation", map[string]any{"id": id})
				return ""
			}},
		{name: "expired invitation", email: "late@example.com", want: "your invitation has expired",
			setup: func(t *testing.T) string {
				if err := o.h.Store.SetSetting(t.Context(), tools.InviteTTLSetting, "1ms"); err != nil {
					t.Fatal(err)
				}
				defer o.h.Store.DeleteSetting(t.Context(), tools.InviteTTLSetting.Key)
				invite("late@example.com")
				return ""
			}},
		{name: "forged state", email: "lee@example.com", tamper: "state", want: "the state the identity provider sent back is not this sign-in's"},
		{name: "forged nonce", email: "lee@example.com", tamper: "nonce", want: "the ID token's nonce is not this sign-in's"},
		{name: "unverified email", email: "lee@example.com", unverified: true, want: "did not vouch for an email address"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := ""
			if tt.setup != nil {
				want = tt.setup(t)
			}
			p.user(tt.email, !tt.unverified)
			p.tamper.Store(tt.tamper)
			worker, refusal := signInWithProvider(t, o, o.base+"/ui/signin")
			if tt.want != "" {
				if worker != "" || !strings.Contains(refusal, tt.want) {
					t.Fatalf("signed in as %q, refusal %q; want refused with %q", worker, refusal, tt.want)
				}
				if strings.Contains(tt.want, "An admin can invite you") && !strings.Contains(refusal, "(w-owner)") {
					t.Errorf("the refusal names no admin: %q", refusal)
				}
				return
			}
			if refusal != "" || worker != want {
				t.Fatalf("signed in as %q (refusal %q), want %s", worker, refusal, want)
			}
		})
	}
}

// TestInvitationByEmail: an invitation goes out through the email
// transport's real sender to the fake Postmark; its link opens the
// sign-in page, and signing in with the provider binds the invited
// worker.
func TestInvitationByEmail(t *testing.T) {
	t.Parallel()
	o := newOrg(t)
	withMaya(t, o)
	p := withProvider(t, o)
	pm := postmarktest.New(t, "server-token")
	cfg, _ := json.Marshal(email.Config{ServerToken: "server-token", From: "org@example.com", InboundAddress: "abc@inbound.postmarkapp.com",
		InboundUser: "u", InboundPassword: "p", APIURL: pm.URL})
	if err := o.h.Store.SetSetting(t.Context(), email.ConfigSetting, string(cfg)); err != nil {
		t.Fatal(err)
	}
	out := o.call(t, "invite", map[string]any{"email": "Kim@Example.com", "position": "p-staff", "role": "viewer"})
	worker := out["worker"].(string)
	if out["sent"] != "email" {
		t.Fatalf("invite = %v, want it sent by email", out)
	}
	// What the outbox does with the contact stream's relay: the sender.
	stream, err := o.h.Store.GetStream(t.Context(), store.ContactStreamPrefix+worker)
	if err != nil {
		t.Fatal(err)
	}
	relays, err := o.h.Store.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{stream.ID}})
	if err != nil || len(relays) != 1 {
		t.Fatalf("contact stream holds %d relays, %v; want the invitation", len(relays), err)
	}
	if res := email.NewSender(o.h.Store, nil, nil).Send(t.Context(), stream, relays[0], 1); res.Failed() {
		t.Fatalf("send: %+v", res)
	}
	mail, ok := pm.Next(10 * time.Second)
	if !ok {
		t.Fatal("the fake Postmark got no invitation")
	}
	link := regexp.MustCompile(`http://\S+/ui/signin\?invitation=inv-[a-z0-9]+`).FindString(mail.TextBody)
	if mail.To != "kim@example.com" || link == "" || link != out["link"] {
		t.Fatalf("mailed %+v; want to kim@example.com with the link %v", mail, out["link"])
	}
	p.user("kim@example.com", true)
	got, refusal := signInWithProvider(t, o, link)
	if got != worker {
		t.Fatalf("signed in as %q (refusal %q), want the invited %s", got, refusal, worker)
	}
	inv := o.call(t, "list_invitations", nil)["invitations"].([]any)[0].(map[string]any)
	if inv["status"] != "accepted" {
		t.Errorf("invitation = %v, want accepted", inv)
	}
}

// TestInvitationUnsentWithoutPostmark: without what sending mail needs in
// transport.postmark, an invitation says no email went and why, gives the
// link to copy, and queues nothing for the outbox to fail on.
func TestInvitationUnsentWithoutPostmark(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		config *email.Config // nil: never set
		want   string
	}{
		{"never set", nil, "transport.postmark has no server_token"},
		{"no server token", &email.Config{From: "org@example.com"}, "transport.postmark has no server_token"},
		{"no from address", &email.Config{ServerToken: "server-token"}, "transport.postmark has no from"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := newOrg(t)
			withMaya(t, o)
			if tt.config != nil {
				cfg, _ := json.Marshal(tt.config)
				if err := o.h.Store.SetSetting(t.Context(), email.ConfigSetting, string(cfg)); err != nil {
					t.Fatal(err)
				}
			}
			out := o.call(t, "invite", map[string]any{"email": "kim@example.com", "position": "p-staff"})
			notSent, _ := out["not_sent"].(string)
			link, _ := out["link"].(string)
			if out["sent"] != nil || !strings.Contains(notSent, tt.want) || !strings.Contains(notSent, "copy the link") || !strings.Contains(link, "/ui/signin?invitation=inv-") {
				t.Fatalf("invite = %v; want no email sent, not_sent naming %q and the link", out, tt.want)
			}
			worker := out["worker"].(string)
			if _, err := o.h.Store.GetStream(t.Context(), store.ContactStreamPrefix+worker); !errors.Is(err, domain.ErrNotFound) {
				t.Fatalf("contact stream of %s: %v; want none made", worker, err)
			}
		})
	}
}

// oidcClient signs a plain HTTP client in through the provider, as the
// browser does, and keeps its CSRF token.
func oidcClient(t *testing.T, o *org, p *provider, email string) *client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &client{Client: &http.Client{Jar: jar}, base: o.base}
	p.user(email, true)
	resp, err := c.Get(o.base + "/ui/signin/oidc?next=/ui/")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	status, body := c.get(t, "/ui/")
	m := regexp.MustCompile(`<meta name="csrf-token" content="([^"]+)">`).FindStringSubmatch(body)
	if status != http.StatusOK || m == nil {
		t.Fatalf("after signing in with the provider: %d\n%s", status, body)
	}
	c.csrf = m[1]
	return c
}

// TestOIDCSignOut: signing out of a session the provider opened ends it
// here and goes on to the provider's end_session_endpoint.
func TestOIDCSignOut(t *testing.T) {
	t.Parallel()
	o := newOrg(t)
	withMaya(t, o)
	p := withProvider(t, o)
	p.endSession.Store(true)
	o.call(t, "invite", map[string]any{"email": "lee@example.com", "position": "p-staff"})
	c := oidcClient(t, o, p, "lee@example.com")
	status, _ := c.post(t, "/ui/signout", url.Values{"csrf": {c.csrf}}, http.Header{"Origin": {o.base}})
	end, _ := url.Parse(c.location)
	if status != http.StatusSeeOther || !strings.HasPrefix(c.location, p.Issuer()+"/logout?") ||
		end.Query().Get("client_id") != p.Config().ClientID || end.Query().Get("post_logout_redirect_uri") != o.base+"/ui/signin" {
		t.Fatalf("sign-out = %d to %q; want the provider's end_session_endpoint", status, c.location)
	}
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	if status, _ := c.get(t, "/ui/"); status != http.StatusSeeOther {
		t.Errorf("after sign-out /ui/ answers %d, want a redirect to sign in", status)
	}
}

// TestOrgRolesInTheUI: a viewer's post to any form is refused naming the
// role, with the org unchanged; a member may not change settings; an
// admin may. The settings link shows only to an admin.
func TestOrgRolesInTheUI(t *testing.T) {
	t.Parallel()
	o := newOrg(t)
	withMaya(t, o)
	o.call(t, "create_stream", map[string]any{"id": "s-inbox", "name": "inbox"})
	o.call(t, "grant_tool", map[string]any{"worker": "w-maya", "tool": "publish"})
	o.call(t, "subscribe", map[string]any{"stream": "s-inbox", "worker": "w-maya"})
	setting := url.Values{"key": {ui.SessionTTLSetting.Key}, "op": {"set"}, "value": {"1h"}}
	forms := map[string]url.Values{
		"/ui/act/publish":       {"stream": {"s-inbox"}, "body": {"hi"}, "next": {"/ui/streams/s-inbox"}},
		"/ui/act/list_workers":  {"next": {"/ui/"}},
		"/ui/act/hire_worker":   {"position": {"p-staff"}, "kind": {"human"}, "name": {"X"}, "next": {"/ui/"}},
		"/ui/act/set_org_role":  {"worker": {"w-maya"}, "role": {"admin"}, "next": {"/ui/"}},
		"/ui/settings":          setting,
		"/ui/act/update_role":   {"id": {"r-staff"}, "content": {"x"}, "next": {"/ui/"}},
		"/ui/act/create_stream": {"name": {"x"}, "next": {"/ui/"}},
	}
	tests := []struct {
		role     domain.OrgRole
		path     string
		form     url.Values
		want     int
		contains string
	}{
		{role: domain.RoleMember, path: "/ui/settings", form: setting, want: http.StatusForbidden, contains: "member may not change settings"},
		{role: domain.RoleAdmin, path: "/ui/settings", form: setting, want: http.StatusSeeOther},
		{role: domain.RoleMember, path: "/ui/act/publish", form: forms["/ui/act/publish"], want: http.StatusSeeOther},
	}
	for path, form := range forms {
		tests = append(tests, struct {
			role     domain.OrgRole
			path     string
			form     url.Values
			want     int
			contains string
		}{role: domain.RoleViewer, path: path, form: form, want: http.StatusForbidden, contains: "viewer may not send a form that changes the org (" + path + ")"})
	}
	for _, tt := range tests {
		t.Run(string(tt.role)+" "+tt.path, func(t *testing.T) {
			if _, err := o.h.Store.SetOrgRole(t.Context(), "w-owner", "w-maya", tt.role); err != nil {
				t.Fatal(err)
			}
			o.h.Store.DeleteSetting(t.Context(), ui.SessionTTLSetting.Key)
			before := stateOf(t, o.h.Store)
			c := o.client(t, "w-maya")
			form := url.Values{"csrf": {c.csrf}}
			for k, v := range tt.form {
				form[k] = v
			}
			status, body := c.post(t, tt.path, form, http.Header{"Origin": {o.base}})
			if status != tt.want || !strings.Contains(body, tt.contains) {
				t.Fatalf("POST %s as %s = %d, want %d containing %q:\n%s", tt.path, tt.role, status, tt.want, tt.contains, firstLines(body))
			}
			if tt.want == http.StatusForbidden && !bytes.Equal(mustJSON(before), mustJSON(stateOf(t, o.h.Store))) {
				t.Error("the refused post changed the org")
			}
			_, page := c.get(t, "/ui/")
			if shows := strings.Contains(page, `href="/ui/settings"`); shows != (tt.role == domain.RoleAdmin) {
				t.Errorf("as %s the settings link shows: %v", tt.role, shows)
			}
			if tt.role == domain.RoleAdmin {
				if v, _, _ := o.h.Store.Setting(t.Context(), ui.SessionTTLSetting.Key); v != "1h" {
					t.Errorf("the admin's setting is %q, want 1h", v)
				}
			}
		})
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

func firstLines(s string) string {
	if i := strings.Index(s, `role="alert"`); i >= 0 {
		return s[i:min(len(s), i+400)]
	}
	return s[:min(len(s), 600)]
}

// TestPeoplePage: an admin invites a person from the People page and sets
// an org role there; both go through the tools. A member has no such page.
func TestPeoplePage(t *testing.T) {
	t.Parallel()
	o := newOrg(t)
	withMaya(t, o)
	tab := o.tab(t, "w-owner")
	uitest.Do(t, tab, chromedp.Navigate(o.base+"/ui/people"), chromedp.WaitVisible(chromedp.CSS(`#invite form`)),
		chromedp.SendKeys(chromedp.CSS(`#invite input[name="email"]`), "ada@example.com"),
		chromedp.SetValue(chromedp.CSS(`#invite select[name="position"]`), "p-staff"),
		chromedp.SetValue(chromedp.CSS(`#invite select[name="role"]`), "viewer"),
		chromedp.Click(chromedp.CSS(`#invite button`)),
		chromedp.WaitVisible(chromedp.CSS(`table.invitations tbody tr`)))
	row := uitest.Run(t, tab, chromedp.Evaluate[string](`document.querySelector("table.invitations tbody tr").textContent`))
	if !strings.Contains(row, "ada@example.com") || !strings.Contains(row, "pending") || !strings.Contains(row, "viewer") {
		t.Fatalf("invitation row = %q", row)
	}
	// Neither Postmark nor an identity provider is set up here: the page
	// says no email went, that the invitation cannot be accepted yet and
	// what to set, and gives the whole link to copy.
	notice := uitest.Run(t, tab, chromedp.Evaluate[[]string](`[document.querySelector(".invited p")?.textContent ?? "", document.querySelector(".invited input")?.value ?? "", document.querySelector(".invited .cannot-accept")?.textContent ?? ""]`))
	if !strings.Contains(notice[0], "ada@example.com") || !strings.Contains(notice[0], "no email went") ||
		!strings.HasPrefix(notice[1], o.base+"/ui/signin?invitation=inv-") {
		t.Errorf("after inviting, the notice says %q with link %q; want no email went and %s/ui/signin?invitation=inv-…", notice[0], notice[1], o.base)
	}
	if want := "No one can accept this invitation yet: an invited person signs in with the identity provider, and this server has none (auth.oidc.issuer and auth.oidc.client_id are not set)."; !strings.Contains(notice[2], want) ||
		!strings.Contains(notice[2], "the invitation is kept, and its link works once they are set.") {
		t.Errorf("after inviting, the notice says %q; want %q and that the invitation is kept", notice[2], want)
	}
	uitest.Do(t, tab, chromedp.SetValue(chromedp.CSS(`form[action="/ui/act/set_org_role"] input[value="w-maya"] ~ select`), "admin"),
		chromedp.Click(chromedp.CSS(`form[action="/ui/act/set_org_role"] input[value="w-maya"] ~ button`)))
	// The form stays visible across the POST, so wait for the stored role.
	waitFor(t, "w-maya's role to be admin", 10*time.Second, func() bool {
		role, _ := o.h.Store.OrgRole(t.Context(), "w-maya")
		return role == domain.RoleAdmin
	})
	if _, err := o.h.Store.SetOrgRole(t.Context(), "w-owner", "w-maya", domain.RoleMember); err != nil {
		t.Fatal(err)
	}
	if status, body := o.client(t, "w-maya").get(t, "/ui/people"); status != http.StatusForbidden || strings.Contains(body, `href="/ui/people"`) {
		t.Errorf("a member's /ui/people = %d, or the nav links it", status)
	}
}
