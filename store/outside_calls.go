package store

import (
	"context"
	"fmt"
	"slices"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

// Calls to outside tools go on the model-call ledger (model_calls, with
// tool set and no tokens), so spend reports, a run's cost and the budgets
// over it count them as they count model calls: their money where
// mcp.prices prices them, and their number against a budget's calls limit.

// OutsideCall is one call of an outside tool that reached its server.
type OutsideCall struct {
	// Activation is the caller's run; empty for a client calling outside
	// any run (only the worker's and the org's budgets then apply).
	Activation string
	Worker     string
	// Tool is the grantable name, <server>__<tool>.
	Tool string
	// Cost is the call's price from mcp.prices; zero when unlisted.
	Cost domain.Money
}

// AdmitOutsideCall refuses a call of an outside tool with a
// *domain.BudgetExceededError while a hard budget over the caller (its
// worker, its run's trigger streams, the org) is reached, before the call
// goes out. Nothing is held: an outside call's price is fixed and small,
// so calls admitted together overspend by at most one call each.
func (s *Store) AdmitOutsideCall(ctx context.Context, c OutsideCall) error {
	tx := s.read(ctx)
	act, rows, err := budgetsOfCaller(tx, c)
	if err != nil {
		return fmt.Errorf("admit outside call %s: %w", c.Tool, err)
	}
	now := s.Now()
	for _, b := range rows {
		bud := b.toDomain()
		key := bud.Window.Key(now)
		spend, err := b.windowSpend(tx, key, bud.Window.Start(now))
		if err != nil {
			return fmt.Errorf("admit outside call %s: %w", c.Tool, err)
		}
		if b.HardReached != key && !bud.Hard.ReachedBy(spend) {
			continue
		}
		st, err := s.budgetStatus(tx, b, now)
		if err != nil {
			return fmt.Errorf("admit outside call %s: %w", c.Tool, err)
		}
		st.State = domain.BudgetExceeded
		stop := &domain.BudgetExceededError{Status: st}
		if act.ID != "" {
			if err := s.write(ctx, func(tx *gorm.DB) error { return s.recordStop(tx, act.ID, stop) }); err != nil {
				return fmt.Errorf("admit outside call %s: %w", c.Tool, err)
			}
		}
		return stop
	}
	return nil
}

// RecordOutsideCall puts a call of an outside tool on the ledger and
// charges it to the budgets over the caller, as RecordUsage does a model
// call; it returns the first budget the call took to its hard limit.
func (s *Store) RecordOutsideCall(ctx context.Context, c OutsideCall) (*domain.BudgetExceededError, error) {
	var stop *domain.BudgetExceededError
	err := s.write(ctx, func(tx *gorm.DB) error {
		act, err := callerActivation(tx, c)
		if err != nil {
			return err
		}
		call := modelCallRow{ActivationID: act.ID, WorkerID: act.WorkerID, Model: c.Tool, Tool: c.Tool,
			CostNanos: int64(c.Cost), Priced: true, CreatedAt: s.Now()}
		if err := tx.Create(&call).Error; err != nil {
			return err
		}
		var streams []string
		if act.ID != "" {
			if streams, err = s.recordActivationStreams(tx, act); err != nil {
				return err
			}
		}
		stop, err = s.chargeBudgets(tx, act, streams, call)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("record outside call %s: %w", c.Tool, err)
	}
	return stop, nil
}

// callerActivation is the caller's run, or a stand-in naming only its
// worker when it calls outside any run.
func callerActivation(tx *gorm.DB, c OutsideCall) (activationRow, error) {
	if c.Activation == "" {
		return activationRow{WorkerID: c.Worker}, nil
	}
	var act activationRow
	if err := tx.Select("id", "worker_id", "trigger_ids").Where("id = ?", c.Activation).Take(&act).Error; err != nil {
		return act, notFoundOr(err, "activation", c.Activation)
	}
	return act, nil
}

// budgetsOfCaller are the budgets over an outside call, narrowest first.
func budgetsOfCaller(tx *gorm.DB, c OutsideCall) (activationRow, []budgetRow, error) {
	if c.Activation != "" {
		return budgetsOver(tx, c.Activation)
	}
	var rows []budgetRow
	err := tx.Where("scope = ?", string(domain.BudgetOrg)).Or("scope = ? AND target = ?", string(domain.BudgetWorker), c.Worker).
		Order("scope, target, period").Find(&rows).Error
	if err != nil {
		return activationRow{}, nil, fmt.Errorf("budgets of %s: %w", c.Worker, err)
	}
	slices.SortStableFunc(rows, func(a, b budgetRow) int { return scopeRank[a.Scope] - scopeRank[b.Scope] })
	return activationRow{WorkerID: c.Worker}, rows, nil
}
