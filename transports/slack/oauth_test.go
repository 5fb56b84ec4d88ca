//go:build !fuzzonly

// Left out of make fuzz's binaries (-tags fuzzonly): this file reaches the
// store, whose tree would be compiled again with fuzz instrumentation.

package slack_test

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/server/ui"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/transports/slack"
)

const (
	clientID     = "1234567890.9876543210"
	clientSecret = "0123456789abcdef0123456789abcdef"
)

// installRig is the install flow's routes over a real store, with the
// UI's own session check, and a fake Slack whose app lists our callback.
type installRig struct {
	fixture
	base string
}

func newInstallRig(t *testing.T) installRig {
	t.Helper()
	f := newFixture(t, "")
	mux := http.NewServeMux()
	for _, r := range slack.Install(f.st, nil, func(r *http.Request) (string, error) { return ui.Operator(f.st, r) }, nil) {
		mux.Handle(r.Pattern, r.Handler)
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	callback := srv.URL + slack.CallbackPath
	f.slack.OAuthApp(clientID, clientSecret, callback)
	must(t, f.st.SetSetting(t.Context(), slack.ConfigSetting, `{"signing_secret":"`+goodSecret+`","client_id":"`+clientID+`","client_secret":"`+clientSecret+`",`+
		`"api_url":"`+f.slack.URL+`","oauth_url":"`+f.slack.AuthorizeURL()+`","redirect_url":"`+callback+`"}`))
	return installRig{fixture: f, base: srv.URL}
}

// browser is a browser with a session of worker, begun with a one-time
// link (viaLink) or a token; no worker: not signed in.
func (r installRig) browser(t *testing.T, worker string, viaLink bool) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	if worker != "" {
		ctx := t.Context()
		tok := servertest.Token(t, r.st, worker)
		var sid string
		var err error
		if viaLink {
			var code string
			code, err = r.st.CreateSignInCode(ctx, tok, time.Minute)
			must(t, err)
			sid, _, err = r.st.SignInWithCode(ctx, code, time.Hour)
		} else {
			sid, _, err = r.st.SignInWithToken(ctx, tok, time.Hour)
		}
		must(t, err)
		u, _ := url.Parse(r.base + "/ui/")
		jar.SetCookies(u, []*http.Cookie{{Name: "helix_session", Value: sid, Path: "/ui/"}})
	}
	return &http.Client{Jar: jar}
}

func get(t *testing.T, c *http.Client, u string) (*http.Response, string) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestInstall: the owner, signed in with a link, is sent to Slack with
// the app's client id, bot scopes and a state; Slack's approval comes
// back to the callback, whose code becomes the bot token, stored in
// transport.slack beside what was there.
func TestInstall(t *testing.T) {
	r := newInstallRig(t)
	resp, body := get(t, r.browser(t, store.OwnerWorker, true), r.base+"/ui/slack/install")
	if resp.StatusCode != 200 || !strings.Contains(body, "installed in Acme (T0TEAM)") {
		t.Fatalf("install ended %d %q, want the app installed", resp.StatusCode, body)
	}
	asked := r.slack.Authorized()
	if asked.Get("client_id") != clientID || asked.Get("scope") != strings.Join(slack.BotScopes, ",") || asked.Get("state") == "" ||
		asked.Get("redirect_uri") != r.base+slack.CallbackPath {
		t.Errorf("Slack was asked %v", asked)
	}
	got, err := r.st.SettingOr(t.Context(), slack.ConfigSetting)
	must(t, err)
	for _, want := range []string{`"bot_token":"` + botToken + `"`, `"bot_user_id":"U0BOT"`, `"signing_secret":"` + goodSecret + `"`, `"client_id":"` + clientID + `"`} {
		if !strings.Contains(got, want) {
			t.Errorf("transport.slack = %s, want it to hold %s", got, want)
		}
	}
	if strings.Contains(slack.ConfigSetting.Redact(got), botToken) {
		t.Errorf("the bot token shows in the redacted setting")
	}
}

// TestInstallRefusals: only an admin (the owner), signed in with a one-time link,
// may begin; a callback is taken only with the state this server made,
// in the browser that began; Slack's refusals are shown.
func TestInstallRefusals(t *testing.T) {
	r := newInstallRig(t)
	ctx := t.Context()
	_, err := r.st.CreatePosition(ctx, store.OwnerWorker, domain.Position{ID: "p-lee", RoleID: "r-bot", Title: "Lead"})
	must(t, err)
	_, err = r.st.HireWorker(ctx, store.OwnerWorker, domain.Worker{ID: "w-lee", Kind: domain.WorkerHuman, PositionID: "p-lee", Name: "Lee"}, nil)
	must(t, err)
	noRedirects := func(c *http.Client) *http.Client {
		c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		return c
	}
	t.Run("begin", func(t *testing.T) {
		for _, tt := range []struct {
			name     string
			browser  *http.Client
			status   int
			location string
			body     string
		}{
			{"not signed in: to sign in", r.browser(t, "", false), 303, "/ui/signin?next=%2Fui%2Fslack%2Finstall", ""},
			{"a session begun with a token", r.browser(t, store.OwnerWorker, false), 403, "", "began with a token"},
			{"a member", r.browser(t, "w-lee", true), 403, "", "member may not change operational config"},
			{"the owner: to Slack", r.browser(t, store.OwnerWorker, true), 302, r.slack.AuthorizeURL() + "?client_id=", ""},
		} {
			t.Run(tt.name, func(t *testing.T) {
				resp, body := get(t, noRedirects(tt.browser), r.base+"/ui/slack/install")
				if resp.StatusCode != tt.status || !strings.HasPrefix(resp.Header.Get("Location"), tt.location) || !strings.Contains(body, tt.body) {
					t.Errorf("answered %d %q to %q, want %d %q containing %q", resp.StatusCode, body, resp.Header.Get("Location"), tt.status, tt.location, tt.body)
				}
			})
		}
	})
	// begin has the owner's browser hold the state cookie, and returns the
	// state Slack would send back.
	begin := func(t *testing.T) (*http.Client, string) {
		b := noRedirects(r.browser(t, store.OwnerWorker, true))
		resp, _ := get(t, b, r.base+"/ui/slack/install")
		loc, _ := url.Parse(resp.Header.Get("Location"))
		return b, loc.Query().Get("state")
	}
	t.Run("callback", func(t *testing.T) {
		for _, tt := range []struct {
			name  string
			query func(state string) url.Values
			other bool // another browser than the one that began
			code  int
			body  string
		}{
			{"a state this server did not make", func(string) url.Values {
				return url.Values{"code": {"code-1"}, "state": {"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}}
			}, false, 400, "not one this server made"},
			{"no state", func(string) url.Values { return url.Values{"code": {"code-1"}} }, false, 400, "missing or malformed"},
			{"another browser", func(s string) url.Values { return url.Values{"code": {"code-1"}, "state": {s}} }, true, 400, "this browser did not begin the install"},
			{"the person declined", func(s string) url.Values { return url.Values{"error": {"access_denied"}, "state": {s}} }, false, 400, "Slack did not install the app: access_denied"},
			{"a code Slack does not know", func(s string) url.Values { return url.Values{"code": {"code-99"}, "state": {s}} }, false, 502, "invalid_code"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				b, state := begin(t)
				if tt.other {
					b = r.browser(t, store.OwnerWorker, true)
				}
				resp, body := get(t, b, r.base+slack.CallbackPath+"?"+tt.query(state).Encode())
				if resp.StatusCode != tt.code || !strings.Contains(body, tt.body) {
					t.Errorf("answered %d %q, want %d containing %q", resp.StatusCode, body, tt.code, tt.body)
				}
				if got, _ := r.st.SettingOr(ctx, slack.ConfigSetting); strings.Contains(got, "bot_token") {
					t.Errorf("a refused callback stored a token: %s", got)
				}
			})
		}
	})
	t.Run("no client_id", func(t *testing.T) {
		must(t, r.st.SetSetting(ctx, slack.ConfigSetting, `{"signing_secret":"`+goodSecret+`"}`))
		resp, body := get(t, r.browser(t, store.OwnerWorker, true), r.base+"/ui/slack/install")
		if resp.StatusCode != 409 || !strings.Contains(body, "no client_id or client_secret") {
			t.Errorf("answered %d %q, want 409 naming client_id", resp.StatusCode, body)
		}
	})
}
