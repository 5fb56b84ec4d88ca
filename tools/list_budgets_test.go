package tools

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
)

// budgetKeys names each listed budget scope/target/window.
func budgetKeys(out listBudgetsOut) []string {
	var keys []string
	for _, b := range out.Budgets {
		keys = append(keys, b.Scope+"/"+b.Target+"/"+b.Window)
	}
	return keys
}

// withBudgets sets a budget on the org, w-echo, w-desk and s-inbox.
func withBudgets(t *testing.T, f fixture) {
	t.Helper()
	withLead(t, f)
	for _, args := range []map[string]any{
		{"scope": "org", "window": "month", "usd": 100},
		{"scope": "worker", "target": "w-echo", "window": "day", "tokens": 1000},
		{"scope": "worker", "target": "w-desk", "window": "total", "tokens": 5000},
		{"scope": "stream", "target": "s-inbox", "window": "day", "tokens": 700},
	} {
		mustCall[any](t, f.env, "set_budget", args)
	}
}

// listed is a list holding budgets of the given scope/target/window keys.
func listed(keys ...string) listBudgetsOut {
	out := listBudgetsOut{}
	for _, k := range keys {
		parts := strings.SplitN(k, "/", 3)
		out.Budgets = append(out.Budgets, budgetOut{Scope: parts[0], Target: parts[1], Window: parts[2]})
	}
	return out
}

func TestListBudgets(t *testing.T) {
	runTable(t, "list_budgets", []toolCase[listBudgetsOut]{
		{name: "none yet", args: map[string]any{}, want: listBudgetsOut{Budgets: []budgetOut{}, Note: budgetsNote}},
		{
			name:  "spend in the window, tokens and money, with unpriced calls named",
			setup: func(t *testing.T, f fixture) { withBudgets(t, f); spendOn(t, f, "w-echo", "m-x", 300, 100) },
			args:  map[string]any{"target": "w-echo"},
			want: listBudgetsOut{Note: budgetsNote, Budgets: []budgetOut{{Scope: "worker", Target: "w-echo", Window: "day", WindowStart: &today, WindowEnd: &tomorrow,
				Limit: amountOut{Tokens: 1000}, Soft: amountOut{Tokens: 800}, State: "ok", WhoCanRaise: []string{"w-owner"}, SetBy: "w-owner", UpdatedAt: t0,
				Spend: spendOut{Calls: 1, InputTokens: 300, OutputTokens: 100, Tokens: 400, UnpricedTokens: 400, UnpricedModels: []string{"m-x"}},
				Note:  "400 tokens were spent on models llm.prices does not list (m-x): they count against token limits but cost no money."}}},
		},
		{name: "unknown scope", args: map[string]any{"scope": "team"}, wantErr: []string{`scope: unknown budget scope "team" (valid: "worker", "stream", "org")`}, wantIs: domain.ErrInvalid},
	})
	// Who sees which: compared by key only.
	runTable(t, "list_budgets", []toolCase[listBudgetsOut]{
		{name: "the owner sees every budget", setup: withBudgets, args: map[string]any{},
			want: listed("org//month", "stream/s-inbox/day", "worker/w-desk/total", "worker/w-echo/day")},
		{name: "by scope", setup: withBudgets, args: map[string]any{"scope": "worker"}, want: listed("worker/w-desk/total", "worker/w-echo/day")},
		{name: "a manager sees the org's, its reports' and readable streams', not a peer line's", setup: withBudgets, caller: "w-lead", args: map[string]any{},
			want: listed("org//month", "stream/s-inbox/day", "worker/w-desk/total")},
		{name: "a worker sees its own and the org's", setup: withBudgets, caller: "w-echo", args: map[string]any{},
			want: listed("org//month", "stream/s-inbox/day", "worker/w-echo/day")},
	}, cmp.Transformer("keys", budgetKeys))
}
