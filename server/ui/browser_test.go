package ui_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/server/ui"
	"github.com/helixml/helix-org/server/ui/uitest"
	"github.com/helixml/helix-org/store/storetest"
	"github.com/helixml/helix-org/tools"
)

// TestGrantsShapeThePage: a person sees a control only for a tool they
// hold, and a write forged from their own signed-in page, CSRF token and
// all, is refused by the tool layer with the store unchanged.
func TestGrantsShapeThePage(t *testing.T) {
	t.Parallel()
	o := newOrg(t)
	withMaya(t, o)
	o.call(t, "create_stream", map[string]any{"id": "s-inbox", "name": "inbox"})
	controls := map[string]string{
		"hire form":         "/ui/|form[action='/ui/act/hire_worker']",
		"new position form": "/ui/|form[action='/ui/act/create_position']",
		"new role form":     "/ui/|form[action='/ui/act/create_role']",
		"dismiss link":      "/ui/|a[href$='#dismiss']",
		"dismiss":           "/ui/workers/w-maya|form[action='/ui/act/dismiss_worker']",
		"new stream form":   "/ui/streams|form[action='/ui/act/create_stream']",
		"composer":          "/ui/streams/s-inbox|form[action='/ui/act/publish']",
		"subscribe form":    "/ui/streams/s-inbox|form[action='/ui/act/subscribe']",
		"archive form":      "/ui/streams/s-inbox|form[action='/ui/act/archive_stream']",
		"role editor":       "/ui/roles/r-staff|form[action='/ui/act/update_role']",
		"grant form":        "/ui/workers/w-maya|form[action='/ui/act/grant_tool']",
		"settings link":     "/ui/|nav a[href='/ui/settings']",
	}
	seen := func(worker string) map[string]bool {
		tab := o.tab(t, worker)
		out := map[string]bool{}
		for name, c := range controls {
			path, sel, _ := strings.Cut(c, "|")
			uitest.Do(t, tab, chromedp.Navigate(o.base+path), chromedp.WaitVisible(chromedp.CSS("main .page-head")))
			out[name] = uitest.Run(t, tab, chromedp.Evaluate[int](fmt.Sprintf(`document.querySelectorAll(%q).length`, sel))) > 0
		}
		return out
	}
	all := map[string]bool{}
	for name := range controls {
		all[name] = true
	}
	if diff := cmp.Diff(all, seen("w-owner")); diff != "" {
		t.Errorf("the owner, who holds every tool, misses controls (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]bool{}, trueOnly(seen("w-maya"))); diff != "" {
		t.Errorf("Maya sees controls for tools she does not hold (-want +got):\n%s", diff)
	}

	// Forge the hire from Maya's own page, with her valid CSRF token.
	tab := o.tab(t, "w-maya")
	uitest.Do(t, tab, chromedp.Navigate(o.base+"/ui/"), chromedp.WaitVisible(chromedp.CSS("main .page-head")))
	before := stateOf(t, o.h.Store)
	got := uitest.Run(t, tab, chromedp.Evaluate[map[string]any](`fetch("/ui/act/hire_worker", {method: "POST",
		headers: {"Accept": "application/json", "X-CSRF-Token": document.querySelector('meta[name="csrf-token"]').content},
		body: new URLSearchParams({position: "p-staff", kind: "human", name: "Mallory"})}).then(async r => ({status: r.status, body: await r.json()}))`, chromedp.EvalAwaitPromise))
	if got["status"] != float64(403) || !strings.Contains(fmt.Sprint(got["body"]), `missing grant: worker w-maya does not hold grant "hire_worker"`) {
		t.Errorf("forged hire: %v, want 403 naming the missing grant", got)
	}
	if diff := cmp.Diff(before, stateOf(t, o.h.Store)); diff != "" {
		t.Errorf("the forged hire changed the org (-before +after):\n%s", diff)
	}
}

func trueOnly(m map[string]bool) map[string]bool {
	out := map[string]bool{}
	for k, v := range m {
		if v {
			out[k] = true
		}
	}
	return out
}

// TestCrossOriginPageCannotAct: a page on another origin (another port of
// the same host, so even a SameSite=Strict cookie rides along) that posts
// a form at the UI is refused, and the org is unchanged.
func TestCrossOriginPageCannotAct(t *testing.T) {
	t.Parallel()
	o := newOrg(t)
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><form id="f" method="post" action="%s/ui/act/create_role">
<input name="title" value="Pwned"><input name="content" value="x"><input name="csrf" value="guessed"></form>
<script>document.getElementById("f").submit()</script>`, o.base)
	}))
	t.Cleanup(evil.Close)
	tab := o.tab(t, "w-owner")
	before := stateOf(t, o.h.Store)
	uitest.Do(t, tab, chromedp.Navigate(evil.URL), chromedp.WaitVisible(chromedp.CSS(".error-text")))
	text := uitest.Run(t, tab, chromedp.Text(chromedp.CSS(".error-text")))
	if !strings.Contains(text, "cross-origin request refused") {
		t.Errorf("the cross-origin post landed on %q, want the refusal", text)
	}
	if diff := cmp.Diff(before, stateOf(t, o.h.Store)); diff != "" {
		t.Errorf("the cross-origin post changed the org (-before +after):\n%s", diff)
	}
}

// TestNoRequestLeavesTheOrigin visits every page, with hostile markdown in
// a message, and checks in the browser's own network log that every
// request went to the server's origin, and that no script from the
// message ran.
func TestNoRequestLeavesTheOrigin(t *testing.T) {
	t.Parallel()
	o, _ := demoOrg(t)
	o.call(t, "publish", map[string]any{"stream": "s-inbox", "body": "![tracker](https://tracker.example/pixel.png) <img src=\"https://tracker.example/raw.png\"> <script>window.pwned=1</script> [site](https://example.com)"})
	tab := o.tab(t, "w-owner")
	reqs := uitest.Record(t, tab)
	for _, p := range uiPages {
		uitest.Do(t, tab, chromedp.Navigate(o.base+p.path), chromedp.WaitVisible(chromedp.CSS("main .page-head")))
	}
	if pwned := uitest.Run(t, tab, chromedp.Evaluate[bool](`window.pwned === 1`)); pwned {
		t.Errorf("a script in a message ran")
	}
	if foreign := reqs.Foreign(o.base); len(foreign) > 0 {
		t.Errorf("requests left the origin %s: %v", o.base, foreign)
	}
	urls := reqs.URLs()
	for _, want := range []string{o.base + "/ui/assets/app.css", o.base + "/ui/assets/app.js", o.base + "/ui/streams/s-inbox"} {
		if !slices.Contains(urls, want) {
			t.Errorf("the network log lacks %s, so it may not be recording: %v", want, urls)
		}
	}
	// The sign-in page, signed out.
	signedOut := uitest.Tab(t)
	out := uitest.Record(t, signedOut)
	uitest.Do(t, signedOut, chromedp.Navigate(o.base+"/ui/signin"), chromedp.WaitVisible(chromedp.CSS(".signin")))
	if foreign := out.Foreign(o.base); len(foreign) > 0 {
		t.Errorf("requests from the sign-in page left the origin %s: %v", o.base, foreign)
	}
	if !slices.Contains(out.URLs(), o.base+"/ui/assets/app.css") {
		t.Errorf("the sign-in page's network log lacks app.css: %v", out.URLs())
	}
}

// TestMarkdownPreview: typing in the role editor shows the rendered
// markdown beside it.
func TestMarkdownPreview(t *testing.T) {
	t.Parallel()
	o, _ := demoOrg(t)
	tab := o.tab(t, "w-owner")
	uitest.Do(t, tab, chromedp.Navigate(o.base+"/ui/roles/r-echo"), chromedp.WaitVisible(chromedp.CSS("#role-preview")),
		chromedp.Evaluate[chromedp.Void](`document.querySelector("textarea[name=content]").value = ""`),
		chromedp.SendKeys(chromedp.CSS("textarea[name=content]"), "# Loud\n\nReply in **capitals**."),
		chromedp.WaitVisible(chromedp.CSS("#role-preview strong")))
	if html := uitest.Run(t, tab, chromedp.InnerHTML(chromedp.CSS("#role-preview"))); !strings.Contains(html, "<h1>Loud</h1>") {
		t.Errorf("preview = %q", html)
	}
}

// liveGate stands between the browser and the live views: it can cut
// every open one and hold new ones back, as a flaky network would.
type liveGate struct {
	mu      sync.Mutex
	open    chan struct{}
	cancels []func()
	lastIDs []string
}

func (g *liveGate) wrap(next http.Handler) http.Handler {
	g.open = make(chan struct{})
	close(g.open)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/ui/live" {
			next.ServeHTTP(w, r)
			return
		}
		g.mu.Lock()
		open := g.open
		g.lastIDs = append(g.lastIDs, r.Header.Get("Last-Event-ID"))
		g.mu.Unlock()
		select {
		case <-open:
		case <-r.Context().Done():
			return
		}
		ctx, cancel := context.WithCancel(r.Context())
		g.mu.Lock()
		g.cancels = append(g.cancels, cancel)
		g.mu.Unlock()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// cut closes every open live view and holds back reconnections.
func (g *liveGate) cut() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.open = make(chan struct{})
	for _, c := range g.cancels {
		c()
	}
	g.cancels = nil
}

func (g *liveGate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	close(g.open)
}

func (g *liveGate) connections() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.lastIDs)
}

// streamBodies is the text of the message bodies on a stream page, in
// page order.
const streamBodies = `[...document.querySelectorAll("#events article.event .md")].map(e => e.textContent.trim())`

// TestLiveReconnect: with a stream page open, the live connection drops;
// 20 events are published meanwhile; when the browser reconnects (with
// Last-Event-ID) all 20 appear, once each, in order.
func TestLiveReconnect(t *testing.T) {
	t.Parallel()
	gate := &liveGate{}
	o := newOrgBehind(t, gate.wrap)
	o.call(t, "create_stream", map[string]any{"id": "s-a", "name": "a"})
	o.call(t, "subscribe", map[string]any{"stream": "s-a"}) // reading needs a subscription
	publishN(t, o, "s-a", 0, 2)
	tab := o.tab(t, "w-owner")
	uitest.Do(t, tab, chromedp.Navigate(o.base+"/ui/streams/s-a"), chromedp.WaitVisible(chromedp.CSS(`#live-status[data-state="live"]`)))
	// One event arrives live, so the browser holds a Last-Event-ID.
	live := publishN(t, o, "s-a", 2, 1)[0]
	waitFor(t, "the live event", 5*time.Second, func() bool {
		return len(uitest.Run(t, tab, chromedp.Evaluate[[]string](streamBodies))) == 3
	})

	gate.cut()
	uitest.Do(t, tab, chromedp.WaitVisible(chromedp.CSS(`#live-status[data-state="connecting"]`)))
	publishN(t, o, "s-a", 3, 20)
	gate.release()

	want := []string{}
	for i := range 23 {
		want = append(want, fmt.Sprintf("message %d", i))
	}
	var got []string
	waitFor(t, "all 23 messages on the page", 10*time.Second, func() bool {
		got = uitest.Run(t, tab, chromedp.Evaluate[[]string](streamBodies))
		return len(got) >= len(want)
	})
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("after the reconnect (-want +got):\n%s", diff)
	}
	conns := gate.connections()
	if len(conns) < 2 || conns[len(conns)-1] != fmt.Sprint(live) {
		t.Errorf("Last-Event-ID of each connection %v: want the reconnect to send %d, the seq of the last event it had", conns, live)
	}
}

// TestLivePublishAppears: an event published over MCP shows up on an open
// stream page; 100 of them arrive once each, in order, pushed rather than
// fetched later: publish-to-DOM p95 under a second. That bound tells push
// from a page that refreshes; the figure itself (budget 250 ms) is
// BenchmarkLivePublishToDOM's, since a test under -race on a busy
// machine measured 317 ms.
func TestLivePublishAppears(t *testing.T) {
	t.Parallel()
	o := newOrg(t)
	o.call(t, "create_stream", map[string]any{"id": "s-a", "name": "a"})
	o.call(t, "subscribe", map[string]any{"stream": "s-a"}) // reading needs a subscription
	tab := o.tab(t, "w-owner")
	uitest.Do(t, tab, chromedp.Navigate(o.base+"/ui/streams/s-a"), chromedp.WaitVisible(chromedp.CSS(`#live-status[data-state="live"]`)))
	p50, p95 := measureLive(t, o, tab, 100)
	t.Logf("publish over MCP → on the page, 100 events: p50 %.1f ms, p95 %.1f ms", p50, p95)
	if p95 >= 1000 {
		t.Errorf("publish → on the page p95 = %.1f ms, want under a second", p95)
	}
}

// newOrgBehind serves an org through wrap, for tests that stand between
// the browser and the server.
func newOrgBehind(t *testing.T, wrap func(http.Handler) http.Handler) *org {
	t.Helper()
	st := storetest.New(t)
	if _, err := st.Bootstrap(t.Context(), tools.Names()); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(wrap(server.New(st, server.Config{Settings: ui.Settings})))
	t.Cleanup(hs.Close)
	h := &servertest.Harness{Store: st, Server: hs, OwnerToken: servertest.Token(t, st, "w-owner")}
	return &org{h: h, owner: h.Owner(t), base: hs.URL}
}

// measureLive publishes n events over MCP, each carrying the time it was
// sent, and has the page note when each appeared; it returns the p50 and
// p95 of publish-to-DOM in milliseconds, after checking every event
// appeared once, in order.
func measureLive(t testing.TB, o *org, tab context.Context, n int) (p50, p95 float64) {
	uitest.Do(t, tab, chromedp.Evaluate[chromedp.Void](`window.seen = [];
	document.querySelectorAll("#events article.event").forEach(el => el.dataset.timed = "1");
	new MutationObserver(() => {
		for (const el of document.querySelectorAll("#events article.event:not([data-timed])")) {
			el.dataset.timed = "1";
			window.seen.push({body: el.querySelector(".md").textContent.trim(), at: Date.now()});
		}
	}).observe(document.getElementById("events"), {childList: true, subtree: true}); 0`))
	sent := map[string]int64{}
	var order []string
	run := time.Now().UnixNano()
	for i := range n {
		body := fmt.Sprintf("live %d of run %d", i, run)
		sent[body] = time.Now().UnixMilli()
		order = append(order, body)
		servertest.Call[domain.Event](t, o.owner, "publish", map[string]any{"stream": "s-a", "body": body})
	}
	type seen struct {
		Body string
		At   int64
	}
	var got []seen
	waitFor(t, fmt.Sprintf("%d events on the page", n), 20*time.Second, func() bool {
		got = uitest.Run(t, tab, chromedp.Evaluate[[]seen](`window.seen`))
		return len(got) >= n
	})
	var bodies []string
	var lat []float64
	for _, s := range got {
		bodies = append(bodies, s.Body)
		lat = append(lat, float64(s.At-sent[s.Body]))
	}
	if diff := cmp.Diff(order, bodies); diff != "" {
		t.Fatalf("events on the page (-published +shown):\n%s", diff)
	}
	slices.Sort(lat)
	if testing.Verbose() {
		t.Logf("latencies (ms): %v", lat)
	}
	return lat[len(lat)/2], lat[(len(lat)*95+99)/100-1]
}
