package ui_test

import (
	"context"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/server/ui"
	"github.com/helixml/helix-org/server/ui/uitest"
	"github.com/helixml/helix-org/store"
)

// TestMain runs the tests, or, when BenchmarkLiveFanOut starts this binary
// as its client swarm, holds live views open (see swarm).
func TestMain(m *testing.M) {
	if os.Getenv(swarmEnv) != "" {
		os.Exit(swarm())
	}
	uitest.Main(m)
}

// org is a served org with the owner connected over MCP.
type org struct {
	h     *servertest.Harness
	owner *mcp.ClientSession
	base  string
}

func newOrg(t *testing.T) *org {
	t.Helper()
	h := servertest.Start(t, server.Config{Settings: append(domain.Settings{}, ui.Settings...)})
	return &org{h: h, owner: h.Owner(t), base: h.Server.URL}
}

// call makes one MCP tool call as the owner that must succeed.
func (o *org) call(t *testing.T, tool string, args map[string]any) map[string]any {
	t.Helper()
	return servertest.Call[map[string]any](t, o.owner, tool, args)
}

// signInLink is a one-click sign-in link for worker, as bootstrap prints.
func (o *org) signInLink(t testing.TB, worker string) string {
	t.Helper()
	code, err := o.h.Store.CreateSignInCode(t.Context(), servertest.Token(t, o.h.Store, worker), store.SignInCodeTTL)
	if err != nil {
		t.Fatal(err)
	}
	return o.base + "/ui/signin?code=" + code
}

// tab opens a browser tab signed in as worker, from a one-click link and
// its button.
func (o *org) tab(t *testing.T, worker string) context.Context {
	t.Helper()
	tab := uitest.Tab(t)
	uitest.Do(t, tab, followSignInLink(o.signInLink(t, worker))...)
	return tab
}

// followSignInLink is what a person does with a one-click link: open it,
// then press its button.
func followSignInLink(link string) []chromedp.Action[chromedp.Void] {
	return []chromedp.Action[chromedp.Void]{chromedp.Navigate(link), chromedp.Click(chromedp.CSS(`form input[name="code"] ~ button`)),
		chromedp.WaitVisible(chromedp.CSS("header.top nav"))}
}

// signInByLink opens a one-click link with c and posts its form, as the
// button does, returning the answer to the post (redirects followed as c
// follows them).
func signInByLink(t testing.TB, c *http.Client, link string) *http.Response {
	t.Helper()
	resp, err := c.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	form := url.Values{}
	for _, name := range []string{"csrf", "next", "code"} {
		m := regexp.MustCompile(`name="` + name + `" value="([^"]*)"`).FindSubmatch(page)
		if m == nil {
			t.Fatalf("the sign-in link's page (%d) has no %s field:\n%s", resp.StatusCode, name, page)
		}
		form.Set(name, html.UnescapeString(string(m[1])))
	}
	resp, err = c.PostForm(link[:strings.Index(link, "/ui/signin")]+"/ui/signin", form)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// client is a plain HTTP client with a session, for requests a browser
// would not make (forged posts) and for golden pages.
type client struct {
	*http.Client
	base string
	csrf string
	// location is where the last post redirected to.
	location string
}

func (o *org) client(t *testing.T, worker string) *client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &client{Client: &http.Client{Jar: jar}, base: o.base}
	resp := signInByLink(t, c.Client, o.signInLink(t, worker))
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := regexp.MustCompile(`<meta name="csrf-token" content="([^"]+)">`).FindSubmatch(body)
	if m == nil {
		t.Fatalf("signed-in page has no CSRF token (status %d):\n%s", resp.StatusCode, body)
	}
	c.csrf = string(m[1])
	return c
}

// get fetches a page and returns its status and body.
func (c *client) get(t *testing.T, path string) (int, string) {
	t.Helper()
	resp, err := c.Get(c.base + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// post sends a form as a page would, with origin and CSRF token unless
// the test overrides them (an empty csrf field leaves the token out).
func (c *client) post(t *testing.T, path string, form url.Values, header http.Header) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, c.base+path, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, vs := range header {
		req.Header[k] = vs
	}
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	defer func() { c.CheckRedirect = nil }()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	c.location = resp.Header.Get("Location")
	return resp.StatusCode, string(b)
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t testing.TB, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
