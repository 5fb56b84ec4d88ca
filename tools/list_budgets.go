package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

type listBudgetsIn struct {
	Scope  string `json:"scope,omitempty" jsonschema:"only budgets of this scope"`
	Target string `json:"target,omitempty" jsonschema:"only the budget of this worker (w-…) or stream (s-…)"`
}

type listBudgetsOut struct {
	Budgets []budgetOut `json:"budgets"`
	Note    string      `json:"note"`
}

// budgetsNote explains how spend is counted, once per list.
const budgetsNote = "Windows are calendar periods in UTC. Tokens are input plus output as the provider reported them. Money comes from llm.prices at the time of each call; calls to a model it does not list count their tokens (unpricedTokens) but no money. A stream's spend is that of every run triggered by its events: a run triggered on two streams counts fully against each."

func listBudgets() Tool {
	return define("list_budgets", "List the spend budgets you may see, each with this window's spend, its state and who can raise it.",
		func(ctx context.Context, env *Env, in listBudgetsIn) (listBudgetsOut, error) {
			if in.Scope != "" {
				if err := domain.BudgetScope(in.Scope).Validate("scope"); err != nil {
					return listBudgetsOut{}, err
				}
			}
			sts, err := env.Store.ListBudgets(ctx, env.Caller, store.BudgetFilter{Scope: domain.BudgetScope(in.Scope), Target: in.Target})
			if err != nil {
				return listBudgetsOut{}, err
			}
			out := listBudgetsOut{Budgets: []budgetOut{}, Note: budgetsNote}
			for _, st := range sts {
				out.Budgets = append(out.Budgets, budgetOf(st))
			}
			return out, nil
		}, enum("scope", domain.BudgetScopes)).annotated("List budgets", readOnly|idempotent)
}
