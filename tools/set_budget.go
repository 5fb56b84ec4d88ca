package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/helixml/helix-org/domain"
)

type setBudgetIn struct {
	Scope       string  `json:"scope" jsonschema:"what the budget limits: a worker's runs, a stream's runs, or the whole org"`
	Target      string  `json:"target,omitempty" jsonschema:"the worker (w-…) or stream (s-…); omitted for the org"`
	Window      string  `json:"window" jsonschema:"the calendar period the spend is counted over, in UTC; total never resets"`
	Tokens      int64   `json:"tokens,omitempty" jsonschema:"the hard limit in tokens (input plus output); 0 for none"`
	USD         float64 `json:"usd,omitempty" jsonschema:"the hard limit in US dollars; 0 for none"`
	SoftPercent int     `json:"softPercent,omitempty" jsonschema:"the soft threshold as a percentage of each hard limit, 1 to 99; by default 80"`
	SoftTokens  int64   `json:"softTokens,omitempty" jsonschema:"the soft threshold in tokens, instead of softPercent"`
	SoftUSD     float64 `json:"softUsd,omitempty" jsonschema:"the soft threshold in US dollars, instead of softPercent"`
	Calls       int64   `json:"calls,omitempty" jsonschema:"the hard limit on calls to outside MCP servers' tools (<server>__<tool>); 0 for none"`
	SoftCalls   int64   `json:"softCalls,omitempty" jsonschema:"the soft threshold in outside tool calls, instead of softPercent"`
	Remove      bool    `json:"remove,omitempty" jsonschema:"true removes the budget of this scope, target and window"`
}

type setBudgetOut struct {
	Budget  budgetOut `json:"budget"`
	Removed bool      `json:"removed,omitempty"`
	Message string    `json:"message"`
}

func setBudget() Tool {
	return define("set_budget", "Set or remove a spend budget (tokens, US dollars, outside tool calls) on a worker, a stream or the org; soft warns, hard holds runs.",
		func(ctx context.Context, env *Env, in setBudgetIn) (setBudgetOut, error) {
			b := domain.Budget{Scope: domain.BudgetScope(in.Scope), Target: in.Target, Window: domain.BudgetWindow(in.Window)}
			if in.Remove {
				if err := b.ValidateKey(); err != nil {
					return setBudgetOut{}, err
				}
				removed, err := env.Store.RemoveBudget(ctx, env.Caller, b)
				if err != nil {
					return setBudgetOut{}, err
				}
				return setBudgetOut{Budget: budgetOf(domain.BudgetStatus{Budget: removed, State: domain.BudgetOK}), Removed: true,
					Message: fmt.Sprintf("Removed %s: nothing it held waits for it any more.", removed.Name())}, nil
			}
			b.Hard = domain.Limit{Tokens: in.Tokens, Money: domain.USD(in.USD), Calls: in.Calls}
			soft, err := softLimit(in, b.Hard)
			if err != nil {
				return setBudgetOut{}, err
			}
			b.Soft = soft
			st, err := env.Store.SetBudget(ctx, env.Caller, b)
			if err != nil {
				return setBudgetOut{}, err
			}
			return setBudgetOut{Budget: budgetOf(st), Message: setMessage(st)}, nil
		}, enum("scope", domain.BudgetScopes), enum("window", domain.BudgetWindows)).annotated("Set budget", destructive|idempotent)
}

// softLimit is the soft threshold set_budget was given: absolute amounts,
// or a percentage of each hard limit (80 by default).
func softLimit(in setBudgetIn, hard domain.Limit) (domain.Limit, error) {
	switch {
	case in.SoftPercent != 0 && (in.SoftTokens != 0 || in.SoftUSD != 0 || in.SoftCalls != 0):
		return domain.Limit{}, domain.Invalid("softPercent", "give softPercent, or softTokens, softUsd and/or softCalls, not both")
	case in.SoftTokens != 0 || in.SoftUSD != 0 || in.SoftCalls != 0:
		return domain.Limit{Tokens: in.SoftTokens, Money: domain.USD(in.SoftUSD), Calls: in.SoftCalls}, nil
	case in.SoftPercent < 0 || in.SoftPercent > 99:
		return domain.Limit{}, domain.Invalid("softPercent", "must be between 1 and 99 (a percentage of each hard limit); got %d", in.SoftPercent)
	}
	pct := int64(in.SoftPercent)
	if pct == 0 {
		pct = domain.DefaultSoftPercent
	}
	return domain.Limit{Tokens: hard.Tokens * pct / 100, Money: hard.Money * domain.Money(pct) / 100, Calls: hard.Calls * pct / 100}, nil
}

func setMessage(st domain.BudgetStatus) string {
	spent := fmt.Sprintf("%s of %s spent %s", st.Spend.Summary(), st.Hard, st.Window.Adverb())
	if st.State == domain.BudgetExceeded {
		return fmt.Sprintf("Set %s, already exceeded (%s): model calls are refused and the scope's triggers wait until the window ends or the limit is raised above the spend.", st.Name(), spent)
	}
	soft := "There is no soft threshold"
	if !st.Soft.IsZero() {
		soft = fmt.Sprintf("A notice goes to %s when the soft threshold (%s) is crossed", strings.Join(st.Raisers, " and "), st.Soft)
	}
	return fmt.Sprintf("Set %s: %s. %s; at the hard limit model calls are refused and the scope's triggers wait (none is dropped) until it is raised. Runs this budget held, if any, start now.",
		st.Name(), spent, soft)
}
