package main

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/server/ui/uitest"
)

// TestSeveralOrgsInTheBrowser: an org other than the default, in a real
// browser: its sign-in link lands on its own org page, a form posted
// there lands on its own role page, and its stream page's live view
// (and markdown preview) reach it under /orgs/<name>/.
func TestSeveralOrgsInTheBrowser(t *testing.T) {
	t.Parallel()
	db, key, st := orgsDB(t, "north")
	base, _, _ := startServeWith(t, st, io.Discard, serveConfig{dbFlags: dbFlags{DB: db, KeyFile: key}})
	mustRun(t, "orgs", "create", "north", "--db", db, "--key-file", key)
	out := mustRun(t, "--org", "north", "bootstrap", "--db", db, "--key-file", key, "--url", base)
	link := webUILine.FindStringSubmatch(out)
	if link == nil {
		t.Fatalf("bootstrap printed no Web UI line:\n%s", out)
	}
	root := base + "/orgs/north"
	tab := uitest.Tab(t)
	uitest.Do(t, tab, chromedp.Navigate(link[1]), chromedp.WaitVisible(chromedp.CSS(".signin")),
		chromedp.Click(chromedp.CSS(`form input[name="code"] ~ button`)), chromedp.WaitVisible(chromedp.CSS("header.top nav")))
	if loc := uitest.Run(t, tab, chromedp.Location()); loc != root+"/ui/" {
		t.Fatalf("after north's sign-in link the address bar reads %q, want %s/ui/", loc, root)
	}
	submit(t, tab, "#new-role form", map[string]string{"title": "Echo", "content": "Reply on the stream."})
	if loc := uitest.Run(t, tab, chromedp.Location()); loc != root+"/ui/roles/r-echo" {
		t.Errorf("creating a role in north landed on %q, want %s/ui/roles/r-echo", loc, root)
	}

	owner, err := servertest.Dial(t, root+"/workers/w-owner/mcp", printedToken(t, out))
	if err != nil {
		t.Fatal(err)
	}
	servertest.Call[map[string]any](t, owner, "create_stream", map[string]any{"id": "s-news", "name": "news"})
	servertest.Call[map[string]any](t, owner, "subscribe", map[string]any{"stream": "s-news"})
	uitest.Do(t, tab, chromedp.Navigate(root+"/ui/streams/s-news"), chromedp.WaitVisible(chromedp.CSS(`#live-status[data-state="live"]`)))
	servertest.Call[map[string]any](t, owner, "publish", map[string]any{"stream": "s-news", "body": "hello north"})
	pollUntil(t, "north's event on its open stream page", 30*time.Second, func() bool {
		return strings.Contains(text(t, tab, "#events article.event .md"), "hello north")
	})
	// The role page's editor previews its markdown through the org's own
	// /ui/preview (app.js finds the org's root from the page's address).
	uitest.Do(t, tab, chromedp.Navigate(root+"/ui/roles/r-echo"), chromedp.WaitReady(chromedp.CSS("textarea[data-preview]")),
		chromedp.Evaluate[chromedp.Void](`(a => { a.value = "**bold**"; a.dispatchEvent(new Event("input", {bubbles: true})); })(document.querySelector("textarea[data-preview]"))`))
	pollUntil(t, "the role editor's markdown preview", 30*time.Second, func() bool {
		return strings.Contains(uitest.Run(t, tab, chromedp.Evaluate[string](`document.getElementById(document.querySelector("textarea[data-preview]").dataset.preview).innerHTML`)), "<strong>bold</strong>")
	})
}
