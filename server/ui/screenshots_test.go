package ui_test

import (
	"context"
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
	{"stream-preview", "/ui/streams/s-inbox?preview=proc-refunds"},
	{"chats", "/ui/chat"},
	{"chat", "/ui/chat/w-echo"},
	{"fleet", "/ui/fleet"},
	{"inbox", "/ui/inbox"},
	{"memory", "/ui/memory"},
	{"audit", "/ui/audit"},
	{"calls", "/ui/calls"},
	{"settings", "/ui/settings"},
	{"tasks", "/ui/tasks"},
	{"task", "/ui/tasks/t-refunds"},
	{"task-review", "/ui/tasks/t-faq"},
	{"money", "/ui/money"},
	{"people", "/ui/people"},
}

// uiSizes are the widths every page is checked and pictured at: a desktop
// and the narrowest phone in common use.
var uiSizes = []struct {
	name          string
	width, height int64
	mobile        bool
}{{"1280", 1280, 800, false}, {"360", 360, 740, true}}

// emulate sets a tab's viewport to size.
func emulate(t *testing.T, tab context.Context, width, height int64, mobile bool) {
	t.Helper()
	opts := []chromedp.EmulateViewportOption{}
	if mobile {
		opts = append(opts, chromedp.EmulateMobile, chromedp.EmulateScale(2))
	}
	uitest.Do(t, tab, chromedp.EmulateViewport(width, height, opts...))
}

// widest names what makes a page scroll sideways: "" when the document is
// no wider than the window, else the element reaching furthest right
// (the innermost, of those that reach as far) and how far.
const widest = `(() => {
  const root = document.documentElement;
  if (root.scrollWidth <= root.clientWidth) return "";
  let worst = null, right = 0;
  for (const el of document.body.querySelectorAll("*")) {
    const r = el.getBoundingClientRect();
    if (r.width > 0 && r.right >= right) { worst = el; right = r.right; }
  }
  const name = (el) => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") +
    (typeof el.className === "string" && el.className ? "." + el.className.trim().split(/\s+/).join(".") : "");
  const path = [];
  for (let el = worst; el && el !== document.body && path.length < 4; el = el.parentElement) path.unshift(name(el));
  return "document " + root.scrollWidth + "px wide in a " + root.clientWidth + "px window; widest: " + path.join(" > ") +
    " reaching " + Math.round(right) + "px (" + JSON.stringify((worst.textContent || "").trim().slice(0, 40)) + ")";
})()`

// TestScreenshots saves every page at 1280 and 360 px wide, and checks
// that no page scrolls sideways: on failure it names the page and the
// element that sticks out.
func TestScreenshots(t *testing.T) {
	t.Parallel()
	o, _ := demoOrg(t)
	tab := o.tab(t, "w-owner")
	for _, size := range uiSizes {
		emulate(t, tab, size.width, size.height, size.mobile)
		for _, p := range uiPages {
			uitest.Do(t, tab, chromedp.Navigate(o.base+p.path), chromedp.WaitVisible(chromedp.CSS("main .page-head")),
				chromedp.WaitNotPresent(chromedp.CSS(`#live-status[data-state="connecting"]`)))
			if wide := uitest.Run(t, tab, chromedp.Evaluate[string](widest)); wide != "" {
				t.Errorf("%s at %s px: %s", p.name, size.name, wide)
			}
			// A table scrolls inside its box, which the page width does
			// not show: every cell must be on screen.
			hidden := uitest.Run(t, tab, chromedp.Evaluate[[]string](`[...document.querySelectorAll("main th, main td")]
				.filter(c => c.getClientRects().length && c.getBoundingClientRect().right > window.innerWidth + 1)
				.map(c => c.dataset.label || c.textContent.trim().slice(0, 20))`))
			if len(hidden) > 0 {
				t.Errorf("%s at %s px: table cells off the right edge: %q", p.name, size.name, hidden)
			}
			t.Logf("%s", uitest.Screenshot(t, tab, p.name+"-"+size.name))
		}
	}
	// The sign-in page, signed out.
	signedOut := uitest.Tab(t)
	for _, size := range uiSizes {
		emulate(t, signedOut, size.width, size.height, size.mobile)
		uitest.Do(t, signedOut, chromedp.Navigate(o.base+"/ui/signin"), chromedp.WaitVisible(chromedp.CSS(".signin")))
		if wide := uitest.Run(t, signedOut, chromedp.Evaluate[string](widest)); wide != "" {
			t.Errorf("signin at %s px: %s", size.name, wide)
		}
		t.Logf("%s", uitest.Screenshot(t, signedOut, "signin-"+size.name))
	}
}
