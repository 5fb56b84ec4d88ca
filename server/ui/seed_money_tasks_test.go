package ui_test

import (
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

// seedTasksAndMoney gives the demo org's Tasks and Money pages something
// to show: a spec task in implementation (Scout plans, Echo builds, item
// 1 done and item 2 under way), one waiting for the owner's review of its
// spec, two budgets, and the model calls of Echo's and Scout's runs.
func seedTasksAndMoney(t *testing.T, o *org, clock *storetest.Clock) {
	t.Helper()
	ctx, st := t.Context(), o.h.Store
	call := func(tool string, args map[string]any) { clock.Advance(3 * time.Minute); o.call(t, tool, args) }
	call("create_spec_task", map[string]any{"id": "t-refunds", "title": "Refund self-service", "priority": 2, "planner": "w-scout", "builders": []string{"w-echo"},
		"prompt": "Let customers ask for a refund from their order page, within the **30-day** policy."})
	clock.Advance(3 * time.Minute)
	design := "# Refund self-service\n\nA *Refund* button on the order page opens a form; the API checks the policy and queues the refund.\n\n" +
		"| piece | where |\n|---|---|\n| policy | `refunds/policy.go` |\n| API | `POST /orders/{id}/refund` |\n"
	items := []domain.TaskItem{{Seq: 1, Title: "Refund policy table", Files: []string{"refunds/policy.go"}},
		{Seq: 2, Title: "Refund API", BlockedBy: []int{1}, Verify: "go test ./refunds"},
		{Seq: 3, Title: "Refund button on the order page", BlockedBy: []int{2}},
		{Seq: 4, Title: "Receipt email", BlockedBy: []int{2}}}
	if _, err := st.SubmitSpec(ctx, "w-scout", "t-refunds", design, items, 0); err != nil {
		t.Fatal(err)
	}
	call("review_spec", map[string]any{"task": "t-refunds", "approve": true, "comments": "Looks right."})
	clock.Advance(9 * time.Minute)
	if _, err := st.ReportItem(ctx, "w-echo", "t-refunds", 1, domain.OutcomeDelivered, "Policy table with the 30-day rule and its tests.", ""); err != nil {
		t.Fatal(err)
	}
	call("create_spec_task", map[string]any{"id": "t-faq", "title": "FAQ page", "planner": "w-scout", "builders": []string{"w-echo"},
		"prompt": "Answer the ten most asked questions on one page."})
	clock.Advance(3 * time.Minute)
	if _, err := st.SubmitSpec(ctx, "w-scout", "t-faq", "# FAQ page\n\nOne markdown page, linked from the footer.", []domain.TaskItem{{Seq: 1, Title: "Collect the questions"}, {Seq: 2, Title: "Write the page", BlockedBy: []int{1}}}, 0); err != nil {
		t.Fatal(err)
	}

	call("set_budget", map[string]any{"scope": "worker", "target": "w-echo", "window": "day", "tokens": 10000})
	call("set_budget", map[string]any{"scope": "org", "window": "month", "usd": 5})
	for _, u := range []struct {
		act   string
		usage store.Usage
	}{
		{"act-scout-1", store.Usage{Model: "claude-sonnet-4-5", Input: 2400, Output: 300, Cost: domain.USD(0.0117), Priced: true}},
		{"act-echo-1", store.Usage{Model: "claude-sonnet-4-5", Input: 4100, Output: 650, Cost: domain.USD(0.02205), Priced: true}},
		{"act-echo-1", store.Usage{Model: "gpt-4o-mini", Input: 3000, Output: 800, Cost: domain.USD(0.00093), Priced: true}},
	} {
		clock.Advance(5 * time.Minute)
		if _, err := st.RecordUsage(ctx, u.act, u.usage); err != nil {
			t.Fatal(err)
		}
	}
}
