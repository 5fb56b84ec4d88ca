package ui_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server/ui/uitest"
	"github.com/helixml/helix-org/store"
)

// TestEndorseOnTheMemoryPage: the owner endorses the quarantined insight
// with its button; the page then lists it among the trusted ones,
// endorsed by the owner, and recall's store says the same.
func TestEndorseOnTheMemoryPage(t *testing.T) {
	t.Parallel()
	o, _ := demoOrg(t)
	ctx := t.Context()
	all, err := o.h.Store.ListInsights(ctx, "", store.InsightFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var id string
	for _, in := range all {
		if in.Quarantined() {
			id = in.ID
		}
	}
	if id == "" {
		t.Fatal("the demo org has no quarantined insight")
	}
	tab := o.tab(t, "w-owner")
	card := fmt.Sprintf(`section[aria-label=Insights] article[id=%q]`, id)
	uitest.Do(t, tab, chromedp.Navigate(o.base+"/ui/memory"),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`section[aria-label=Quarantined] article[id=%q] form[action="/ui/act/endorse_insight"] button`, id))),
		chromedp.Click(chromedp.CSS(fmt.Sprintf(`article[id=%q] form[action="/ui/act/endorse_insight"] button`, id))),
		chromedp.WaitVisible(chromedp.CSS(card)))
	if n := uitest.Run(t, tab, chromedp.Evaluate[int](`document.querySelectorAll("section[aria-label=Quarantined]").length`)); n != 0 {
		t.Errorf("the Quarantined section is still on the page after endorsing its one insight")
	}
	foot := uitest.Run(t, tab, chromedp.Text(chromedp.CSS(card+" .insight-foot")))
	if !strings.Contains(foot, "endorsed by w-owner") {
		t.Errorf("the endorsed card's footer = %q, want it endorsed by w-owner", foot)
	}
	got, err := o.h.Store.GetInsight(ctx, id)
	if err != nil || got.Quarantined() || got.EndorsedBy != "w-owner" {
		t.Errorf("insight after endorsing = %+v, %v; want trusted, endorsed by w-owner", got, err)
	}
	t.Logf("%s", uitest.Screenshot(t, tab, "memory-endorsed"))
}

// TestApprovedItemShowsItsOutcome: approving a request in the inbox
// leaves its notice there with the outcome — who approved it and that the
// call ran — until the person dismisses it; the notice stays on its
// stream.
func TestApprovedItemShowsItsOutcome(t *testing.T) {
	t.Parallel()
	o, _ := demoOrg(t)
	ctx := t.Context()
	pending, err := o.h.Store.ListApprovals(ctx, "w-owner", store.ApprovalFilter{})
	if err != nil || len(pending) != 1 {
		t.Fatalf("pending approvals = %v, %v; want the demo's one", pending, err)
	}
	ap := pending[0]
	notices, err := o.h.Store.EventsBefore(ctx, store.PageQuery{StreamIDs: []string{domain.InboxStream("w-owner")}})
	if err != nil {
		t.Fatal(err)
	}
	var notice string
	for _, ev := range notices {
		if ev.CausedBy == ap.ID {
			notice = ev.ID
		}
	}
	if notice == "" {
		t.Fatalf("no notice of %s in the owner's inbox stream", ap.ID)
	}
	item := fmt.Sprintf(`li[id="item-%s"]`, notice)

	tab := o.tab(t, "w-owner")
	uitest.Do(t, tab, chromedp.Navigate(o.base+"/ui/inbox"),
		chromedp.Click(chromedp.CSS(fmt.Sprintf(`form[action="/ui/act/decide_approval"]:has(input[value=%q]) button[value=approve]`, ap.ID))),
		chromedp.WaitVisible(chromedp.CSS(item+" .outcome")))
	outcome := uitest.Run(t, tab, chromedp.Text(chromedp.CSS(item+" .outcome")))
	if !strings.Contains(outcome, "approved") || !strings.Contains(outcome, "Approved by w-owner") || !strings.Contains(outcome, "the call ran") {
		t.Errorf("the approved item's outcome = %q, want approved by w-owner and run", outcome)
	}
	if n := uitest.Run(t, tab, chromedp.Evaluate[int](`document.querySelectorAll('form[action="/ui/act/decide_approval"]').length`)); n != 0 {
		t.Errorf("%d approve/deny forms left after deciding the only request", n)
	}
	t.Logf("%s", uitest.Screenshot(t, tab, "inbox-outcome"))

	uitest.Do(t, tab, chromedp.Evaluate[chromedp.Void](`document.body.dataset.stale = "1"`),
		chromedp.Click(chromedp.CSS(item+` form[action="/ui/act/dismiss_inbox"] button`)),
		chromedp.WaitVisible(chromedp.CSS("body:not([data-stale]) main .page-head")))
	if n := uitest.Run(t, tab, chromedp.Evaluate[int](fmt.Sprintf(`document.querySelectorAll(%q).length`, item))); n != 0 {
		t.Errorf("the dismissed item is still in the inbox")
	}
	if _, err := o.h.Store.GetEvent(ctx, notice); err != nil {
		t.Errorf("the dismissed notice is gone from its stream: %v", err)
	}
}

// TestMemoryPageFollowsGrants: the page shows what list_insights would
// show the viewer, Endorse only to those who hold endorse_insight, and a
// filter it cannot apply is a 400 that names the valid values.
func TestMemoryPageFollowsGrants(t *testing.T) {
	t.Parallel()
	o := newOrg(t)
	withMaya(t, o)
	hooked := store.Writing(t.Context(), domain.Untrusted("webhook event e-1 on s-hooks"))
	in, err := o.h.Store.StoreInsight(hooked, "w-owner", domain.Insight{Trigger: "a deploy finishes", Resolution: "tell the team",
		Type: domain.InsightFact, Scope: domain.ScopeOrg}, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	owner, maya := o.client(t, "w-owner"), o.client(t, "w-maya")
	cases := []struct {
		name    string
		c       *client
		grant   string
		path    string
		status  int
		want    []string
		wantNot []string
	}{
		{name: "without list_insights", c: maya, path: "/ui/memory", status: 200,
			want: []string{`missing grant: worker w-maya does not hold grant &#34;list_insights&#34;`}, wantNot: []string{in.ID}},
		{name: "with list_insights, without endorse_insight", c: maya, grant: "list_insights", path: "/ui/memory", status: 200,
			want: []string{in.ID, "Endorsing takes the endorse_insight grant."}, wantNot: []string{`action="/ui/act/endorse_insight"`}},
		{name: "the owner may endorse", c: owner, path: "/ui/memory", status: 200, want: []string{in.ID, `action="/ui/act/endorse_insight"`}},
		{name: "a filter by an unknown type", c: owner, path: "/ui/memory?type=hunch", status: 400,
			want: []string{`type: unknown insight type &#34;hunch&#34; (valid: &#34;pattern&#34;, &#34;failure&#34;, &#34;preference&#34;, &#34;fact&#34;)`}},
		{name: "a filter that leaves nothing", c: owner, path: "/ui/memory?tag=none", status: 200, want: []string{"No insights match this filter."}, wantNot: []string{in.ID}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.grant != "" {
				o.call(t, "grant_tool", map[string]any{"worker": "w-maya", "tool": tc.grant})
			}
			status, body := tc.c.get(t, tc.path)
			if status != tc.status {
				t.Errorf("GET %s = %d, want %d", tc.path, status, tc.status)
			}
			for _, w := range tc.want {
				if !strings.Contains(body, w) {
					t.Errorf("GET %s lacks %q", tc.path, w)
				}
			}
			for _, w := range tc.wantNot {
				if strings.Contains(body, w) {
					t.Errorf("GET %s shows %q", tc.path, w)
				}
			}
		})
	}
}
