package tools

import (
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

var (
	today    = time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC)
	tomorrow = time.Date(2026, 3, 5, 0, 0, 0, 0, time.UTC)
)

// spendOn runs one activation of an AI worker over its pending triggers
// and records a relayed call of in+out tokens of model.
func spendOn(t *testing.T, f fixture, worker, model string, in, out int64) {
	t.Helper()
	st := f.env.Store
	a, _, _, err := st.Claim(t.Context(), worker, "a-"+worker, time.Hour)
	if err != nil {
		t.Fatalf("claim for %s: %v", worker, err)
	}
	if _, err := st.RecordUsage(t.Context(), a.ID, store.Usage{Model: model, Input: in, Output: out}); err != nil {
		t.Fatal(err)
	}
}

// withStreamBy creates a local stream as a worker.
func withStreamBy(t *testing.T, f fixture, worker, id string) {
	t.Helper()
	must(t)(f.env.Store.CreateStream(t.Context(), worker, domain.Stream{ID: id, Name: id, Transport: domain.Transport{Kind: domain.TransportLocal}}))
}

func TestSetBudget(t *testing.T) {
	echoDay := map[string]any{"scope": "worker", "target": "w-echo", "window": "day", "tokens": 1000}
	runTable(t, "set_budget", []toolCase[setBudgetOut]{
		{
			name: "a worker's daily token budget, soft at 80% by default",
			args: echoDay,
			want: setBudgetOut{Budget: budgetOut{Scope: "worker", Target: "w-echo", Window: "day", WindowStart: &today, WindowEnd: &tomorrow,
				Limit: amountOut{Tokens: 1000}, Soft: amountOut{Tokens: 800}, State: "ok", WhoCanRaise: []string{"w-owner"}, SetBy: "w-owner", UpdatedAt: t0},
				Message: "Set worker w-echo's daily budget: 0 tokens of 1,000 tokens spent today (UTC). A notice goes to w-owner when the soft threshold (800 tokens) is crossed; " +
					"at the hard limit model calls are refused and the scope's triggers wait (none is dropped) until it is raised. Runs this budget held, if any, start now."},
			check: func(t *testing.T, f fixture, _ setBudgetOut) {
				c := lastOrgChange(t, f.env.Store)
				if c.Action != "set_budget" || c.Target != "worker/w-echo/day" || c.Actor != "w-owner" {
					t.Errorf("s-org change = %+v", c)
				}
			},
		},
		{
			name: "the org's monthly money budget with an absolute soft threshold",
			args: map[string]any{"scope": "org", "window": "month", "usd": 25.5, "softUsd": 20},
			want: setBudgetOut{Budget: budgetOut{Scope: "org", Window: "month", WindowStart: ptr(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)), WindowEnd: ptr(time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)),
				Limit: amountOut{USD: 25.5}, Soft: amountOut{USD: 20}, State: "ok", WhoCanRaise: []string{"w-owner"}, SetBy: "w-owner", UpdatedAt: t0},
				Message: "Set the org's monthly budget: 0 tokens of $25.50 spent this month (UTC). A notice goes to w-owner when the soft threshold ($20.00) is crossed; " +
					"at the hard limit model calls are refused and the scope's triggers wait (none is dropped) until it is raised. Runs this budget held, if any, start now."},
		},
		{
			name:   "a manager sets its report's total budget; both it and the owner hear of it",
			setup:  func(t *testing.T, f fixture) { withLead(t, f) },
			caller: "w-lead",
			args:   map[string]any{"scope": "worker", "target": "w-desk", "window": "total", "tokens": 50000, "usd": 2, "softPercent": 50},
			want: setBudgetOut{Budget: budgetOut{Scope: "worker", Target: "w-desk", Window: "total", Limit: amountOut{Tokens: 50000, USD: 2}, Soft: amountOut{Tokens: 25000, USD: 1},
				State: "ok", WhoCanRaise: []string{"w-lead", "w-owner"}, SetBy: "w-lead", UpdatedAt: t0},
				Message: "Set worker w-desk's total budget: 0 tokens of 50,000 tokens and $2.00 spent in total. A notice goes to w-lead and w-owner when the soft threshold (25,000 tokens and $1.00) is crossed; " +
					"at the hard limit model calls are refused and the scope's triggers wait (none is dropped) until it is raised. Runs this budget held, if any, start now."},
		},
		{
			name:   "a manager sets the budget of a stream its report created",
			setup:  func(t *testing.T, f fixture) { withLead(t, f); withStreamBy(t, f, "w-desk", "s-desk") },
			caller: "w-lead",
			args:   map[string]any{"scope": "stream", "target": "s-desk", "window": "day", "tokens": 100},
			want: setBudgetOut{Budget: budgetOut{Scope: "stream", Target: "s-desk", Window: "day", WindowStart: &today, WindowEnd: &tomorrow,
				Limit: amountOut{Tokens: 100}, Soft: amountOut{Tokens: 80}, State: "ok", WhoCanRaise: []string{"w-lead", "w-owner"}, SetBy: "w-lead", UpdatedAt: t0},
				Message: "Set stream s-desk's daily budget: 0 tokens of 100 tokens spent today (UTC). A notice goes to w-lead and w-owner when the soft threshold (80 tokens) is crossed; " +
					"at the hard limit model calls are refused and the scope's triggers wait (none is dropped) until it is raised. Runs this budget held, if any, start now."},
		},
		{
			name:  "set below what was spent, it is exceeded at once and says so",
			setup: func(t *testing.T, f fixture) { spendOn(t, f, "w-echo", "m-x", 900, 300) },
			args:  echoDay,
			want: setBudgetOut{Budget: budgetOut{Scope: "worker", Target: "w-echo", Window: "day", WindowStart: &today, WindowEnd: &tomorrow,
				Limit: amountOut{Tokens: 1000}, Soft: amountOut{Tokens: 800}, State: "exceeded", WhoCanRaise: []string{"w-owner"}, SetBy: "w-owner", UpdatedAt: t0,
				Spend: spendOut{Calls: 1, InputTokens: 900, OutputTokens: 300, Tokens: 1200, UnpricedTokens: 1200, UnpricedModels: []string{"m-x"}},
				Note: "budget exceeded: worker w-echo's daily budget of 1,000 tokens is used up: 1,200 tokens spent today (UTC) by the calls of w-echo " +
					"(1,200 tokens on models not in llm.prices, which cost no money: m-x). No more model calls or runs for it until 2026-03-05T00:00:00Z, " +
					"when the window ends, or until the limit is raised: w-owner can raise it with set_budget."},
				Message: "Set worker w-echo's daily budget, already exceeded (1,200 tokens of 1,000 tokens spent today (UTC)): model calls are refused " +
					"and the scope's triggers wait until the window ends or the limit is raised above the spend."},
		},
		{
			name: "remove deletes it",
			setup: func(t *testing.T, f fixture) {
				mustCall[any](t, f.env, "set_budget", map[string]any{"scope": "worker", "target": "w-echo", "window": "day", "tokens": 1000})
			},
			args: map[string]any{"scope": "worker", "target": "w-echo", "window": "day", "remove": true},
			check: func(t *testing.T, f fixture, got setBudgetOut) {
				if bs, _ := f.env.Store.ListBudgets(t.Context(), "", store.BudgetFilter{}); len(bs) != 0 {
					t.Errorf("budgets after remove: %+v", bs)
				}
				if c := lastOrgChange(t, f.env.Store); c.Action != "remove_budget" {
					t.Errorf("s-org change = %+v", c)
				}
			},
			want: setBudgetOut{Budget: budgetOut{Scope: "worker", Target: "w-echo", Window: "day", Limit: amountOut{Tokens: 1000}, Soft: amountOut{Tokens: 800}, State: "ok", SetBy: "w-owner", UpdatedAt: t0},
				Removed: true, Message: "Removed worker w-echo's daily budget: nothing it held waits for it any more."},
		},

		// Bad input: the field and the valid values.
		{name: "unknown scope", args: map[string]any{"scope": "team", "window": "day", "tokens": 1}, wantErr: []string{`scope: unknown budget scope "team" (valid: "worker", "stream", "org")`}, wantIs: domain.ErrInvalid},
		{name: "unknown window", args: map[string]any{"scope": "org", "window": "week", "tokens": 1}, wantErr: []string{`window: unknown budget window "week" (valid: "day", "month", "total")`}},
		{name: "an org budget has no target", args: map[string]any{"scope": "org", "target": "w-echo", "window": "day", "tokens": 1}, wantErr: []string{`target: an org budget has no target; omit it (got "w-echo")`}},
		{name: "a worker budget needs a worker id", args: map[string]any{"scope": "worker", "target": "s-inbox", "window": "day", "tokens": 1}, wantErr: []string{`target: a worker budget needs the worker's id (w-…) as target; got "s-inbox"`}},
		{name: "a stream budget needs a stream id", args: map[string]any{"scope": "stream", "window": "day", "tokens": 1}, wantErr: []string{`target: a stream budget needs the stream's id (s-…) as target; got ""`}},
		{name: "negative tokens", args: map[string]any{"scope": "org", "window": "day", "tokens": -5}, wantErr: []string{"tokens: must be positive; omit it to leave that measure unlimited"}},
		{name: "negative usd", args: map[string]any{"scope": "org", "window": "day", "usd": -0.5}, wantErr: []string{"usd: must be positive"}},
		{name: "negative soft tokens", args: map[string]any{"scope": "org", "window": "day", "tokens": 10, "softTokens": -1}, wantErr: []string{"softTokens: must be positive"}},
		{name: "no limit at all", args: map[string]any{"scope": "org", "window": "day"}, wantErr: []string{"tokens: give a hard limit: tokens, usd, calls (outside tool calls) or any of them together"}},
		{name: "soft above hard", args: map[string]any{"scope": "org", "window": "day", "tokens": 1000, "softTokens": 1200}, wantErr: []string{"softTokens: the soft threshold (1,200) must be below the hard limit tokens (1,000)"}},
		{name: "soft money above hard", args: map[string]any{"scope": "org", "window": "day", "usd": 1, "softUsd": 1}, wantErr: []string{"softUsd: the soft threshold ($1.00) must be below the hard limit usd ($1.00)"}},
		{name: "soft money without a money limit", args: map[string]any{"scope": "org", "window": "day", "tokens": 10, "softUsd": 1}, wantErr: []string{"softUsd: there is no money limit (usd)"}},
		{name: "soft percent out of range", args: map[string]any{"scope": "org", "window": "day", "tokens": 10, "softPercent": 150}, wantErr: []string{"softPercent: must be between 1 and 99 (a percentage of each hard limit); got 150"}},
		{name: "soft percent and an amount", args: map[string]any{"scope": "org", "window": "day", "tokens": 10, "softPercent": 50, "softTokens": 5}, wantErr: []string{"softPercent: give softPercent, or softTokens, softUsd and/or softCalls, not both"}},
		{name: "unknown worker", args: map[string]any{"scope": "worker", "target": "w-nope", "window": "day", "tokens": 1}, wantErr: []string{`worker "w-nope": not found`}, wantIs: domain.ErrNotFound},
		{name: "unknown stream", args: map[string]any{"scope": "stream", "target": "s-nope", "window": "day", "tokens": 1}, wantErr: []string{`stream "s-nope": not found`}, wantIs: domain.ErrNotFound},
		{name: "not your report", caller: "w-maya", args: echoDay, wantIs: domain.ErrForbidden,
			wantErr: []string{"w-maya may only manage workers below p-support; w-echo (p-support) is not, so w-maya cannot set worker w-echo's daily budget; w-owner can"}},
		{name: "not your own", setup: func(t *testing.T, f fixture) { withLead(t, f) }, caller: "w-lead",
			args:    map[string]any{"scope": "worker", "target": "w-lead", "window": "day", "tokens": 1},
			wantErr: []string{"w-lead cannot set its own budget; a worker above it in the chart (or w-owner) can"}, wantIs: domain.ErrForbidden},
		{name: "the org's is the owner's", setup: func(t *testing.T, f fixture) { withLead(t, f) }, caller: "w-lead",
			args: map[string]any{"scope": "org", "window": "day", "tokens": 1}, wantErr: []string{"only an admin (w-owner, or a person made one with set_org_role) sets the org's budget"}, wantIs: domain.ErrForbidden},
		{name: "a stream the owner created", setup: func(t *testing.T, f fixture) { withLead(t, f) }, caller: "w-lead",
			args: map[string]any{"scope": "stream", "target": "s-inbox", "window": "day", "tokens": 1}, wantErr: []string{"s-inbox was created by w-owner, so only w-owner sets its budget"}},
		{name: "a stream you created", setup: func(t *testing.T, f fixture) { withLead(t, f); withStreamBy(t, f, "w-lead", "s-lead") }, caller: "w-lead",
			args: map[string]any{"scope": "stream", "target": "s-lead", "window": "day", "tokens": 1}, wantErr: []string{"w-lead created s-lead and cannot set its budget; a worker above w-lead in the chart (or w-owner) can"}},
		{name: "remove what is not there", args: map[string]any{"scope": "worker", "target": "w-echo", "window": "day", "remove": true}, wantErr: []string{`budget "worker/w-echo/day": not found`}, wantIs: domain.ErrNotFound},
	})
}
func ptr[T any](v T) *T { return &v }
