package store_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// TestOutsideCallsAgainstBudgets: calls of outside tools go on the ledger
// with their mcp.prices cost, count against a budget's calls and money
// limits, and once one is reached the next call is refused before it goes
// out, naming the budget; spend reports show them apart from model calls.
func TestOutsideCallsAgainstBudgets(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		hard    domain.Limit
		cost    domain.Money
		allowed int // calls admitted before the refusal
		want    string
	}{
		{"calls limit", domain.Limit{Calls: 2}, 0, 2, "budget exceeded: worker w-bot's daily budget of 2 outside tool calls is used up: 0 tokens and 2 outside tool calls spent today (UTC)"},
		{"money limit", domain.Limit{Money: domain.USD(0.5)}, domain.USD(0.25), 2, "budget exceeded: worker w-bot's daily budget of $0.50 is used up: 0 tokens and $0.50 and 2 outside tool calls spent"},
		{"calls and tokens", domain.Limit{Tokens: 1000, Calls: 3}, domain.USD(0.01), 3, "of 1,000 tokens and 3 outside tool calls is used up"},
	} {
		t.Run(c.name, func(t *testing.T) {
			st, _ := budgetOrg(t)
			ctx := t.Context()
			if _, err := st.SetBudget(ctx, "w-owner", domain.Budget{Scope: domain.BudgetWorker, Target: "w-bot", Window: domain.BudgetDay, Hard: c.hard}); err != nil {
				t.Fatal(err)
			}
			publishOn(t, st, "s-a")
			act := claim(t, st, "w-bot", "a-run")
			call := store.OutsideCall{Activation: act.ID, Worker: "w-bot", Tool: "github__issue_read", Cost: c.cost}
			for i := range c.allowed {
				if err := st.AdmitOutsideCall(ctx, call); err != nil {
					t.Fatalf("call %d refused: %v", i+1, err)
				}
				if _, err := st.RecordOutsideCall(ctx, call); err != nil {
					t.Fatal(err)
				}
			}
			err := st.AdmitOutsideCall(ctx, call)
			if _, ok := errors.AsType[*domain.BudgetExceededError](err); !ok || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("call %d: %v; want a budget stop containing %q", c.allowed+1, err, c.want)
			}
			// Outside any run (a client of the worker's own endpoint) the
			// worker's budget stops it too.
			if err := st.AdmitOutsideCall(ctx, store.OutsideCall{Worker: "w-bot", Tool: call.Tool}); err == nil {
				t.Errorf("a call outside any run was admitted past the budget")
			}
			rep, err := st.Spend(ctx, time.Time{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			want := domain.Spend{OutsideCalls: int64(c.allowed), Money: c.cost * domain.Money(c.allowed)}
			if rep.Total.OutsideCalls != want.OutsideCalls || rep.Total.Money != want.Money || rep.Total.Calls != 0 || rep.Total.UnpricedTokens != 0 {
				t.Errorf("spend total = %+v; want %+v", rep.Total, want)
			}
			if len(rep.Models) != 1 || rep.Models[0].Key != "github__issue_read" || rep.Models[0].OutsideCalls != want.OutsideCalls {
				t.Errorf("spend by model = %+v; want github__issue_read with %d calls", rep.Models, c.allowed)
			}
			if len(rep.Streams) != 1 || rep.Streams[0].Key != "s-a" {
				t.Errorf("spend by stream = %+v; want the run's trigger stream s-a", rep.Streams)
			}
			if stop, err := st.BudgetStop(ctx, act.ID); err != nil || !strings.Contains(stop, "budget exceeded") {
				t.Errorf("BudgetStop(%s) = %q, %v; want the budget that stopped it", act.ID, stop, err)
			}
		})
	}
}

// TestCallsLimitValidation: a calls limit is checked like the others.
func TestCallsLimitValidation(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		b    domain.Budget
		want string
	}{
		{"negative", domain.Budget{Hard: domain.Limit{Calls: -1}}, "calls: must be positive"},
		{"soft without hard", domain.Budget{Hard: domain.Limit{Tokens: 10}, Soft: domain.Limit{Calls: 1}}, "softCalls: there is no outside call limit"},
		{"soft at hard", domain.Budget{Hard: domain.Limit{Calls: 5}, Soft: domain.Limit{Calls: 5}}, "softCalls: the soft threshold (5) must be below the hard limit calls (5)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.b.Scope, c.b.Window = domain.BudgetOrg, domain.BudgetDay
			if err := c.b.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Validate = %v; want %q", err, c.want)
			}
		})
	}
}

// TestRunCostCountsOutsideCalls: a run's cost adds what its outside tool
// calls cost; its tokens stay what its runtime reported until a relayed
// model call puts tokens on the ledger.
func TestRunCostCountsOutsideCalls(t *testing.T) {
	t.Parallel()
	st, _ := budgetOrg(t)
	ctx := t.Context()
	publishOn(t, st, "s-a")
	act := claim(t, st, "w-bot", "a-run")
	act.InputTokens, act.OutputTokens = 500, 50
	finish(t, st, act)
	for range 2 {
		if _, err := st.RecordOutsideCall(ctx, store.OutsideCall{Activation: act.ID, Worker: "w-bot", Tool: "github__issue_read", Cost: domain.USD(0.25)}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := st.GetActivation(ctx, act.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.InputTokens != 500 || got.OutputTokens != 50 || got.Cost != domain.USD(0.5) {
		t.Errorf("run after 2 outside calls: %d/%d tokens, %s; want its runtime's 500/50 and $0.50", got.InputTokens, got.OutputTokens, got.Cost)
	}
	if _, err := st.RecordUsage(ctx, act.ID, store.Usage{Model: "m", Input: 300, Output: 100, Cost: domain.USD(0.01), Priced: true}); err != nil {
		t.Fatal(err)
	}
	if got, err = st.GetActivation(ctx, act.ID); err != nil {
		t.Fatal(err)
	}
	if got.InputTokens != 300 || got.OutputTokens != 100 || got.Cost != domain.USD(0.51) {
		t.Errorf("run after a relayed model call too: %d/%d tokens, %s; want the relay's 300/100 and $0.51", got.InputTokens, got.OutputTokens, got.Cost)
	}
}
