package ui_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/server/ui/uitest"
	"github.com/helixml/helix-org/store"
)

// until waits, on every change to the page, for a condition on it; the
// condition's text is in the error when it never holds.
func until(js string) chromedp.Action[chromedp.Void] {
	poll := chromedp.Poll[chromedp.Void](js, chromedp.WithPollingMutation())
	return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		v, err := poll(ctx, tg)
		if err != nil {
			err = fmt.Errorf("waiting for %s: %w", js, err)
		}
		return v, err
	}
}

// cardIn is a condition: item seq's card is in a column of the board and
// shows text.
func cardIn(column string, seq, text string) string {
	return `(() => { const c = document.querySelector('.column-` + column + ` #item-` + seq + `'); return !!c && c.textContent.includes(` + "`" + text + "`" + `); })()`
}

// TestWalkTasksAndMoney, in a real browser: the owner starts a spec task
// with the Tasks page's form; the planner's design arrives on the open
// page; the owner approves it; as the builders report over MCP, items
// move across the board without a reload. Then the owner sets a budget
// on the Money page and, without a reload, sees its spend rise when a run
// that spent ends.
func TestWalkTasksAndMoney(t *testing.T) {
	t.Parallel()
	o := newOrg(t)
	taskTeam(t, o)
	tab := o.tab(t, "w-owner")
	live := chromedp.WaitVisible(chromedp.CSS(`#live-status[data-state="live"]`))
	markPage := chromedp.Evaluate[chromedp.Void](`window.notReloaded = true`)
	notReloaded := func(when string) {
		t.Helper()
		if !uitest.Run(t, tab, chromedp.Evaluate[bool](`window.notReloaded === true`)) {
			t.Errorf("%s: the page was reloaded; it should have updated in place", when)
		}
	}

	uitest.Do(t, tab, chromedp.Navigate(o.base+"/ui/tasks"), chromedp.WaitVisible(chromedp.CSS(`#new-task form`)),
		chromedp.SendKeys(chromedp.CSS(`#new-task input[name=title]`), "Login"),
		chromedp.SendKeys(chromedp.CSS(`#new-task textarea[name=prompt]`), "Add a login page."),
		chromedp.SetValue(chromedp.CSS(`#new-task select[name=planner]`), "w-plan"),
		chromedp.Click(chromedp.CSS(`#new-task input[value="w-b1"]`)),
		chromedp.Click(chromedp.CSS(`#new-task input[value="w-b2"]`)),
		chromedp.Click(chromedp.CSS(`#new-task form > button`)),
		chromedp.WaitVisible(chromedp.CSS(`h1 .status-spec_generation`)), live, markPage)
	if loc := uitest.Run(t, tab, chromedp.Location()); loc != o.base+"/ui/tasks/t-login" {
		t.Fatalf("the form led to %s, want the new task's page", loc)
	}

	submitSpec(t, o, "t-login")
	uitest.Do(t, tab, until(`!!document.querySelector('#review button[value="true"]')`))
	notReloaded("the design arriving")
	if design := uitest.Run(t, tab, chromedp.Text(chromedp.CSS(`#design .md`))); !strings.Contains(design, "Sessions in a cookie.") {
		t.Errorf("the design shown = %q", design)
	}

	uitest.Do(t, tab, chromedp.SendKeys(chromedp.CSS(`#review textarea[name=comments]`), "Ship it."),
		chromedp.Click(chromedp.CSS(`#review button[value="true"]`)),
		chromedp.WaitVisible(chromedp.CSS(`h1 .status-implementation`)), live, markPage,
		until(cardIn("in_progress", "1", "Builder 1")), until(cardIn("in_progress", "2", "Builder 2")), until(cardIn("pending", "3", "after 1, 2")))

	for _, b := range []struct {
		worker string
		item   int
		want   string
	}{{"w-b1", 1, "Builder 1"}, {"w-b2", 2, "Builder 2"}} {
		builder := o.h.Connect(t, b.worker, servertest.Token(t, o.h.Store, b.worker))
		servertest.Call[map[string]any](t, builder, "report_item", map[string]any{"task": "t-login", "item": b.item, "outcome": "delivered", "summary": fmt.Sprintf("built %d", b.item)})
		uitest.Do(t, tab, until(cardIn("done", fmt.Sprint(b.item), b.want)))
	}
	uitest.Do(t, tab, until(cardIn("in_progress", "3", "Builder")))
	notReloaded("items moving")
	if got := uitest.Run(t, tab, chromedp.Text(chromedp.CSS(`.column-done`))); !strings.Contains(got, "built 1") || !strings.Contains(got, "built 2") {
		t.Errorf("the done column = %q, want both reports' summaries", got)
	}

	uitest.Do(t, tab, chromedp.Navigate(o.base+"/ui/money"), chromedp.WaitVisible(chromedp.CSS(`#set-budget form`)),
		chromedp.SendKeys(chromedp.CSS(`#set-budget input[name=target]`), "w-b1"),
		chromedp.SendKeys(chromedp.CSS(`#set-budget input[name="tokens:json"]`), "1000"),
		chromedp.Click(chromedp.CSS(`#set-budget button`)),
		chromedp.WaitVisible(chromedp.CSS(`#budget-worker-w-b1-day`)), live, markPage)
	if got := uitest.Run(t, tab, chromedp.Text(chromedp.CSS(`#budget-worker-w-b1-day .spent`))); got != "0 tokens of 1,000 tokens" {
		t.Errorf("the new budget shows %q, want none of it spent", got)
	}
	spendRun(t, o.h.Store, "w-b1", "act-walk", store.Usage{Model: "m", Input: 500, Output: 100})
	uitest.Do(t, tab, until(`document.querySelector('#budget-worker-w-b1-day .spent')?.textContent === "600 tokens of 1,000 tokens"`),
		until(`!!document.querySelector('#top-runs tr[data-run="act-walk"]')`))
	notReloaded("spend rising")
	if got := uitest.Run(t, tab, chromedp.Text(chromedp.CSS(`.spent-total`))); !strings.HasPrefix(got, "600 tokens") {
		t.Errorf("the period's spend = %q, want 600 tokens", got)
	}
}
