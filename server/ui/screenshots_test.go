package ui_test

import (
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/helixml/helix-org/server/ui/uitest"
)

// uiPages are the pages every browser-wide check visits: name and path.
var uiPages = []struct{ name, path string }{
	{"org", "/ui/"},
	{"role", "/ui/roles/r-support"},
	{"worker-ai", "/ui/workers/w-echo"},
	{"worker-human", "/ui/workers/w-maya"},
	{"streams", "/ui/streams"},
	{"stream", "/ui/streams/s-inbox"},
	{"stream-hooks", "/ui/streams/s-hooks"},
	{"chats", "/ui/chat"},
	{"chat", "/ui/chat/w-echo"},
	{"fleet", "/ui/fleet"},
	{"inbox", "/ui/inbox"},
	{"audit", "/ui/audit"},
	{"settings", "/ui/settings"},
	{"tasks", "/ui/tasks"},
	{"task", "/ui/tasks/t-refunds"},
	{"task-review", "/ui/tasks/t-faq"},
	{"money", "/ui/money"},
}

// TestScreenshots saves every page at desktop (1280x800) and phone
// (360x800) widths, and checks that no page is wider than the screen.
func TestScreenshots(t *testing.T) {
	o, _ := demoOrg(t)
	tab := o.tab(t, "w-owner")
	sizes := []struct {
		name          string
		width, height int64
		mobile        bool
	}{{"desktop", 1280, 800, false}, {"phone", 360, 800, true}}
	for _, size := range sizes {
		opts := []chromedp.EmulateViewportOption{}
		if size.mobile {
			opts = append(opts, chromedp.EmulateMobile, chromedp.EmulateScale(2))
		}
		uitest.Do(t, tab, chromedp.EmulateViewport(size.width, size.height, opts...))
		for _, p := range uiPages {
			uitest.Do(t, tab, chromedp.Navigate(o.base+p.path), chromedp.WaitVisible(chromedp.CSS("main .page-head")),
				chromedp.WaitNotPresent(chromedp.CSS(`#live-status[data-state="connecting"]`)))
			overflow := uitest.Run(t, tab, chromedp.Evaluate[int](`document.documentElement.scrollWidth - window.innerWidth`))
			if overflow > 0 {
				t.Errorf("%s at %s: the page is %dpx wider than the screen", p.name, size.name, overflow)
			}
			// A table scrolls inside its box, which the page width does
			// not show: every cell must be on screen.
			hidden := uitest.Run(t, tab, chromedp.Evaluate[[]string](`[...document.querySelectorAll("main th, main td")]
				.filter(c => c.getClientRects().length && c.getBoundingClientRect().right > window.innerWidth + 1)
				.map(c => c.dataset.label || c.textContent.trim().slice(0, 20))`))
			if len(hidden) > 0 {
				t.Errorf("%s at %s: table cells off the right edge: %q", p.name, size.name, hidden)
			}
			path := uitest.Screenshot(t, tab, p.name+"-"+size.name)
			t.Logf("%s", path)
		}
	}
	// The sign-in page, signed out.
	signedOut := uitest.Tab(t)
	for _, size := range sizes {
		opts := []chromedp.EmulateViewportOption{}
		if size.mobile {
			opts = append(opts, chromedp.EmulateMobile, chromedp.EmulateScale(2))
		}
		uitest.Do(t, signedOut, chromedp.EmulateViewport(size.width, size.height, opts...),
			chromedp.Navigate(o.base+"/ui/signin"), chromedp.WaitVisible(chromedp.CSS(".signin")))
		if overflow := uitest.Run(t, signedOut, chromedp.Evaluate[int](`document.documentElement.scrollWidth - window.innerWidth`)); overflow > 0 {
			t.Errorf("signin at %s: the page is %dpx wider than the screen", size.name, overflow)
		}
		t.Logf("%s", uitest.Screenshot(t, signedOut, "signin-"+size.name))
	}
}
