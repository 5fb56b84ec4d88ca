package ui_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/server/ui/uitest"
)

// TestWaitingOnApproval: in a real browser, with the org chart and the
// fleet open, an AI worker's call under a grant that needs approval turns
// it to "waiting for approval", naming the call and who must approve it,
// without a reload; approving it from the inbox makes it idle again.
func TestWaitingOnApproval(t *testing.T) {
	t.Parallel()
	o := newOrg(t)
	o.call(t, "create_role", map[string]any{"id": "r-bot", "title": "Bot", "content": "Tidy up."})
	o.call(t, "create_position", map[string]any{"id": "p-bot", "role": "r-bot", "title": "Bot"})
	o.call(t, "hire_worker", map[string]any{"id": "w-bot", "position": "p-bot", "kind": "ai", "name": "Bot"})
	o.call(t, "grant_tool", map[string]any{"worker": "w-bot", "tool": "create_role", "approval": "required"})

	// The line for w-bot on each page: its status pill and why.
	pages := []struct {
		name, path, line string
		tab              context.Context
	}{
		{name: "org chart", path: "/ui/", line: `li.worker:has(a[href="/ui/workers/w-bot"])`},
		{name: "fleet", path: "/ui/fleet", line: `section[aria-label=Idle] li:has(a[href="/ui/workers/w-bot"])`},
	}
	status := func(tab context.Context, line string) string {
		return uitest.Run(t, tab, chromedp.Evaluate[string](fmt.Sprintf(`(() => { const l = document.querySelector(%q);
			return l ? [...l.querySelectorAll(".pill:not([class*=kind-]), .why")].map(e => e.textContent.trim()).join(" | ") : "" })()`, line)))
	}
	for i, p := range pages {
		pages[i].tab = o.tab(t, "w-owner")
		uitest.Do(t, pages[i].tab, chromedp.Navigate(o.base+p.path), chromedp.WaitVisible(chromedp.CSS(`#live-status[data-state="live"]`)))
		if got := status(pages[i].tab, p.line); got != "idle" {
			t.Fatalf("%s before the call: w-bot shows %q, want idle", p.name, got)
		}
	}

	bot := o.h.Connect(t, "w-bot", servertest.Token(t, o.h.Store, "w-bot"))
	held := servertest.Call[struct {
		Pending  bool
		Approval domain.Approval
	}](t, bot, "create_role", map[string]any{"id": "r-new", "title": "New", "content": "x"})
	if !held.Pending {
		t.Fatalf("create_role answered %+v, want it held", held)
	}
	want := "waiting for approval | waits for w-owner to approve create_role"
	for _, p := range pages {
		var got string
		waitFor(t, p.name+" to show w-bot waiting for approval", 10*time.Second, func() bool {
			got = status(p.tab, p.line)
			return got == want
		})
		if cls := uitest.Run(t, p.tab, chromedp.Evaluate[string](fmt.Sprintf(`document.querySelector(%q).querySelector(".status-waiting") ? "yes" : "no"`, p.line))); cls != "yes" {
			t.Errorf("%s: the pill is not styled status-waiting", p.name)
		}
		uitest.Screenshot(t, p.tab, "waiting-approval-"+strings.ReplaceAll(p.name, " ", "-"))
	}

	inbox := o.tab(t, "w-owner")
	uitest.Do(t, inbox, chromedp.Navigate(o.base+"/ui/inbox"), chromedp.WaitVisible(chromedp.CSS(`form[action="/ui/act/decide_approval"]`)))
	uitest.Screenshot(t, inbox, "waiting-approval-inbox")
	uitest.Do(t, inbox,
		chromedp.Evaluate[chromedp.Void](`document.body.dataset.stale = "1"`),
		chromedp.Click(chromedp.CSS(`form[action="/ui/act/decide_approval"] button[value=approve]`)),
		chromedp.WaitVisible(chromedp.CSS("body:not([data-stale]) main .page-head")))
	if _, err := o.h.Store.GetRole(t.Context(), "r-new"); err != nil {
		t.Fatalf("the approved call did not run: %v", err)
	}
	for _, p := range pages {
		waitFor(t, p.name+" to show w-bot idle again", 10*time.Second, func() bool { return status(p.tab, p.line) == "idle" })
	}
}
