package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/helixml/helix-org/domain"
)

// budgetRow is one budget and its state in the current window. The state
// columns hold the key of the window they apply to (domain.BudgetWindow.
// Key), so they lapse by themselves when the next window begins.
type budgetRow struct {
	Scope      string `gorm:"primaryKey"`
	Target     string `gorm:"primaryKey"`
	Period     string `gorm:"primaryKey"`
	HardTokens int64  `gorm:"not null"`
	HardNanos  int64  `gorm:"not null"`
	SoftTokens int64  `gorm:"not null"`
	SoftNanos  int64  `gorm:"not null"`
	HardCalls  int64  `gorm:"not null;default:0"`
	SoftCalls  int64  `gorm:"not null;default:0"`
	SetBy      string
	UpdatedAt  time.Time
	// SoftNoticed is the window whose soft notices went out.
	SoftNoticed string `gorm:"not null;default:''"`
	// HardReached is the window in which the hard limit was reached: while
	// it is the current one, the scope is held.
	HardReached string `gorm:"not null;default:''"`
	// SumWindow is the window the running sums below count, which
	// chargeBudgets keeps in step with the ledger.
	SumWindow   string `gorm:"not null;default:''"`
	SumCalls    int64  `gorm:"not null;default:0"`
	SumInput    int64  `gorm:"not null;default:0"`
	SumOutput   int64  `gorm:"not null;default:0"`
	SumNanos    int64  `gorm:"not null;default:0"`
	SumUnpriced int64  `gorm:"not null;default:0"`
	SumOutside  int64  `gorm:"not null;default:0"`
}

func (r *budgetRow) setSums(key string, sp domain.Spend) {
	r.SumWindow, r.SumCalls, r.SumInput, r.SumOutput, r.SumNanos, r.SumUnpriced = key, sp.Calls, sp.InputTokens, sp.OutputTokens, int64(sp.Money), sp.UnpricedTokens
	r.SumOutside = sp.OutsideCalls
}

func (r budgetRow) spend() domain.Spend {
	return domain.Spend{Calls: r.SumCalls, InputTokens: r.SumInput, OutputTokens: r.SumOutput, Money: domain.Money(r.SumNanos), UnpricedTokens: r.SumUnpriced,
		OutsideCalls: r.SumOutside}
}

// sums are the running-sum columns, for an update.
func (r budgetRow) sums() map[string]any {
	return map[string]any{"sum_window": r.SumWindow, "sum_calls": r.SumCalls, "sum_input": r.SumInput, "sum_output": r.SumOutput,
		"sum_nanos": r.SumNanos, "sum_unpriced": r.SumUnpriced, "sum_outside": r.SumOutside}
}

func (budgetRow) TableName() string { return "budgets" }

func (r budgetRow) toDomain() domain.Budget {
	return domain.Budget{Scope: domain.BudgetScope(r.Scope), Target: r.Target, Window: domain.BudgetWindow(r.Period),
		Hard:  domain.Limit{Tokens: r.HardTokens, Money: domain.Money(r.HardNanos), Calls: r.HardCalls},
		Soft:  domain.Limit{Tokens: r.SoftTokens, Money: domain.Money(r.SoftNanos), Calls: r.SoftCalls},
		SetBy: r.SetBy, UpdatedAt: r.UpdatedAt.UTC()}
}

func budgetFromDomain(b domain.Budget) budgetRow {
	return budgetRow{Scope: string(b.Scope), Target: b.Target, Period: string(b.Window),
		HardTokens: b.Hard.Tokens, HardNanos: int64(b.Hard.Money), SoftTokens: b.Soft.Tokens, SoftNanos: int64(b.Soft.Money),
		HardCalls: b.Hard.Calls, SoftCalls: b.Soft.Calls}
}

// whereBudget selects one budget by its key.
func whereBudget(tx *gorm.DB, scope domain.BudgetScope, target string, w domain.BudgetWindow) *gorm.DB {
	return tx.Where("scope = ? AND target = ? AND period = ?", string(scope), target, string(w))
}

// SetBudget creates or replaces the budget of b's scope, target and
// window, as actor, and returns it with its spend so far. Its state is
// worked out afresh: a hard limit raised above the spend releases the
// scope's waiting triggers at once (every write wakes the dispatcher), one
// lowered to it holds the scope, and a soft threshold raised above the
// spend will warn again when crossed.
func (s *Store) SetBudget(ctx context.Context, actor string, b domain.Budget) (domain.BudgetStatus, error) {
	if err := b.Validate(); err != nil {
		return domain.BudgetStatus{}, err
	}
	var out domain.BudgetStatus
	err := s.write(ctx, func(tx *gorm.DB) error {
		if err := s.checkSetsBudget(tx, actor, b); err != nil {
			return err
		}
		var before *domain.Budget
		var prev budgetRow
		err := whereBudget(tx, b.Scope, b.Target, b.Window).Take(&prev).Error
		if err == nil {
			d := prev.toDomain()
			before = &d
		} else if !errors.Is(err, gorm.ErrRecordNotFound) {
			return err
		}
		now := s.Now()
		row := budgetFromDomain(b)
		row.SetBy, row.UpdatedAt = actor, now
		spend, err := spendOf(tx, b.Scope, b.Target, b.Window.Start(now), nil)
		if err != nil {
			return err
		}
		key := b.Window.Key(now)
		row.setSums(key, spend)
		if b.Hard.ReachedBy(spend) {
			row.HardReached = key
		}
		if prev.SoftNoticed == key && b.Soft.ReachedBy(spend) {
			row.SoftNoticed = key
		}
		if err := tx.Clauses(clause.OnConflict{UpdateAll: true}).Create(&row).Error; err != nil {
			return err
		}
		after := row.toDomain()
		if err := s.audit(tx, Change{Action: "set_budget", Actor: actor, Target: budgetKey(after), Before: budgetAudit(before), After: budgetAudit(&after)}); err != nil {
			return err
		}
		out, err = s.budgetStatus(tx, row, now)
		return err
	})
	if err != nil {
		return domain.BudgetStatus{}, fmt.Errorf("set budget: %w", err)
	}
	return out, nil
}

// RemoveBudget deletes a budget, as actor, releasing whatever it held.
func (s *Store) RemoveBudget(ctx context.Context, actor string, b domain.Budget) (domain.Budget, error) {
	var removed domain.Budget
	err := s.write(ctx, func(tx *gorm.DB) error {
		var row budgetRow
		if err := whereBudget(tx, b.Scope, b.Target, b.Window).Take(&row).Error; err != nil {
			return notFoundOr(err, "budget", budgetKey(b))
		}
		removed = row.toDomain()
		if err := s.checkSetsBudget(tx, actor, removed); err != nil {
			return err
		}
		if err := whereBudget(tx, b.Scope, b.Target, b.Window).Delete(&budgetRow{}).Error; err != nil {
			return err
		}
		return s.audit(tx, Change{Action: "remove_budget", Actor: actor, Target: budgetKey(removed), Before: budgetAudit(&removed)})
	})
	if err != nil {
		return domain.Budget{}, fmt.Errorf("remove budget: %w", err)
	}
	return removed, nil
}

// BudgetFilter narrows ListBudgets; empty fields match everything.
type BudgetFilter struct {
	Scope  domain.BudgetScope
	Target string
}

// ListBudgets returns the budgets reader may see, each with its spend in
// the current window: the org's, its own, those of workers below it and
// those of streams it may read (the operator and the owner see all).
func (s *Store) ListBudgets(ctx context.Context, reader string, f BudgetFilter) ([]domain.BudgetStatus, error) {
	q := s.read(ctx).Order("scope, target, period")
	if f.Scope != "" {
		q = q.Where("scope = ?", string(f.Scope))
	}
	if f.Target != "" {
		q = q.Where("target = ?", f.Target)
	}
	var rows []budgetRow
	if err := q.Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("list budgets: %w", err)
	}
	tx := s.read(ctx)
	a := newAuthz(tx)
	now := s.Now()
	out := []domain.BudgetStatus{}
	for _, r := range rows {
		ok, err := seesBudget(a, reader, r)
		if err != nil {
			return nil, fmt.Errorf("list budgets: %w", err)
		}
		if !ok {
			continue
		}
		st, err := s.budgetStatus(tx, r, now)
		if err != nil {
			return nil, fmt.Errorf("list budgets: %w", err)
		}
		out = append(out, st)
	}
	return out, nil
}

func seesBudget(a *authz, reader string, r budgetRow) (bool, error) {
	if reader == "" || reader == domain.OwnerWorker {
		return true, nil
	}
	var err error
	switch domain.BudgetScope(r.Scope) {
	case domain.BudgetOrg:
		return true, nil
	case domain.BudgetWorker:
		if r.Target == reader {
			return true, nil
		}
		err = a.manages(reader, r.Target)
	case domain.BudgetStream:
		err = a.reads(reader, r.Target)
	}
	if isForbidden(err) || errors.Is(err, domain.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// budgetStatus is a budget with its spend in the window holding now.
func (s *Store) budgetStatus(tx *gorm.DB, r budgetRow, now time.Time) (domain.BudgetStatus, error) {
	b := r.toDomain()
	start := b.Window.Start(now)
	spend, err := spendOf(tx, b.Scope, b.Target, start, nil)
	if err != nil {
		return domain.BudgetStatus{}, err
	}
	raisers, err := budgetRaisers(tx, b)
	if err != nil {
		return domain.BudgetStatus{}, err
	}
	st := domain.BudgetStatus{Budget: b, WindowStart: start, WindowEnd: b.Window.End(now), Spend: spend, State: b.StateOf(spend), Raisers: raisers}
	if r.HardReached == b.Window.Key(now) {
		// The limit was reached in this window; it holds until raised even
		// if a price change has since lowered what the spend is worth.
		st.State = domain.BudgetExceeded
	}
	return st, nil
}

// checkSetsBudget is who may set a budget: the org's only an admin; a
// worker's a worker above it in the chart (never itself); a stream's a
// worker above the stream's creator (never the creator itself), and only
// an admin for streams the owner or the system created. The operator
// (actor "") and the admins (the owner, and people set_org_role made
// admins: budgets are theirs) may set any.
func (s *Store) checkSetsBudget(tx *gorm.DB, actor string, b domain.Budget) error {
	target := b.Target
	if b.Scope == domain.BudgetStream {
		var st streamRow
		if err := tx.Select("id", "created_by").Where("id = ?", b.Target).Take(&st).Error; err != nil {
			return notFoundOr(err, "stream", b.Target)
		}
		target = st.CreatedBy
	} else if b.Scope == domain.BudgetWorker {
		if ok, err := exists(tx, &workerRow{}, b.Target); err != nil || !ok {
			return orNotFound(err, "worker", b.Target)
		}
	}
	if actor == "" || actor == domain.OwnerWorker {
		return nil
	}
	if role, err := orgRoleOf(tx, actor); err != nil || role == domain.RoleAdmin {
		return err
	}
	switch {
	case b.Scope == domain.BudgetOrg:
		return domain.Forbidden("only an admin (%s, or a person made one with set_org_role) sets the org's budget", domain.OwnerWorker)
	case b.Scope == domain.BudgetStream && (target == "" || target == domain.OwnerWorker):
		return domain.Forbidden("%s was created by %s, so only %s sets its budget", b.Target, orSystem(target), domain.OwnerWorker)
	case target == actor && b.Scope == domain.BudgetWorker:
		return domain.Forbidden("%s cannot set its own budget; a worker above it in the chart (or %s) can", actor, domain.OwnerWorker)
	case target == actor:
		return domain.Forbidden("%s created %s and cannot set its budget; a worker above %s in the chart (or %s) can", actor, b.Target, actor, domain.OwnerWorker)
	}
	err := newAuthz(tx).manages(actor, target)
	if !isForbidden(err) {
		return err
	}
	raisers, rerr := budgetRaisers(tx, b)
	if rerr != nil {
		return rerr
	}
	return domain.Forbidden("%v, so %s cannot set %s; %s can", err, actor, b.Name(), domain.OrList(raisers))
}

func orSystem(w string) string {
	if w == "" {
		return "the system"
	}
	return w
}

// budgetRaisers are who hear of a budget and may raise it: the nearest
// human manager of the scope (of the worker; of the stream's creator)
// and the owner.
func budgetRaisers(tx *gorm.DB, b domain.Budget) ([]string, error) {
	who := ""
	switch b.Scope {
	case domain.BudgetWorker:
		who = b.Target
	case domain.BudgetStream:
		if err := tx.Model(&streamRow{}).Select("created_by").Where("id = ?", b.Target).Scan(&who).Error; err != nil {
			return nil, err
		}
	}
	if who == "" || who == domain.OwnerWorker {
		return []string{domain.OwnerWorker}, nil
	}
	m, err := nearestHuman(tx, who)
	if errors.Is(err, domain.ErrNotFound) {
		// A worker without a seat (dismissed, or never placed) answers to the owner.
		m, err = domain.OwnerWorker, nil
	}
	if err != nil || m == domain.OwnerWorker {
		return []string{domain.OwnerWorker}, err
	}
	return []string{m, domain.OwnerWorker}, nil
}

// budgetKey names a budget on the audit trail: "worker/w-echo/day".
func budgetKey(b domain.Budget) string {
	t := b.Target
	if t == "" {
		t = "org"
	}
	return string(b.Scope) + "/" + t + "/" + string(b.Window)
}

// budgetAudit is a budget as the audit trail shows it, money in dollars.
func budgetAudit(b *domain.Budget) any {
	if b == nil {
		return nil
	}
	return map[string]any{"scope": b.Scope, "target": b.Target, "window": b.Window,
		"tokens": b.Hard.Tokens, "usd": b.Hard.Money.Dollars(), "softTokens": b.Soft.Tokens, "softUsd": b.Soft.Money.Dollars(),
		"calls": b.Hard.Calls, "softCalls": b.Soft.Calls}
}

// ExportBudgets returns every budget's limits, by scope, target and
// window, for an export; what was spent is run history and stays behind.
func (s *Store) ExportBudgets(ctx context.Context) ([]domain.Budget, error) {
	var rows []budgetRow
	if err := s.read(ctx).Order("scope, target, period").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("export budgets: %w", err)
	}
	return mapRows(rows, budgetRow.toDomain), nil
}

// Budget writes a budget's limits as exported, on a worker or stream
// already imported. Its spend starts from the ledger, which an import
// brings none of.
func (im *Importer) Budget(b domain.Budget) error {
	if err := b.Validate(); err != nil {
		return fmt.Errorf("budget %s: %w", b.Name(), err)
	}
	if b.Scope != domain.BudgetOrg {
		model := map[domain.BudgetScope]any{domain.BudgetWorker: &workerRow{}, domain.BudgetStream: &streamRow{}}[b.Scope]
		var n int64
		if err := im.tx.Model(model).Where("id = ?", b.Target).Count(&n).Error; err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("budget %s: %s %q: %w", b.Name(), b.Scope, b.Target, domain.ErrNotFound)
		}
	}
	row := budgetFromDomain(b)
	row.SetBy, row.UpdatedAt = b.SetBy, b.UpdatedAt
	return im.create("budgets", &row)
}
