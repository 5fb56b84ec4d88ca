package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

// Reservations. A relayed model call holds its maximum cost against every
// budget over its run before it is forwarded, and gives it back when it is
// settled: its real usage goes on the ledger and the hold is deleted in
// the same transaction (RecordUsage), or a call that failed releases it.
// The check and the hold are one write transaction, and every write takes
// the store's write lock (SQLite's, PostgreSQL's advisory lock), so calls
// on any number of servers sharing the database see each other's holds: a
// call is admitted while what is spent and held stays below the hard
// limit, so together they overspend by at most the last call's hold. A
// server that dies mid-call leaves holds that lapse after ReservationTTL.

// ReservationTTL is how long a hold lasts without renewal. The relay
// renews its calls' holds while they run (a stream may take many minutes);
// one whose server died frees the budget after this.
const ReservationTTL = 5 * time.Minute

// reservationRow is one call's hold on one budget.
type reservationRow struct {
	ID     string `gorm:"primaryKey"`
	Scope  string `gorm:"primaryKey"`
	Target string `gorm:"primaryKey"`
	Period string `gorm:"primaryKey"`
	// WindowKey is the budget window the hold counts in.
	WindowKey    string    `gorm:"not null"`
	ActivationID string    `gorm:"not null"`
	Tokens       int64     `gorm:"not null"`
	Nanos        int64     `gorm:"not null"`
	ExpiresAt    time.Time `gorm:"not null;index"`
}

func (reservationRow) TableName() string { return "budget_reservations" }

// Reservation is what a model call may cost at most, asked for before it
// is forwarded.
type Reservation struct {
	Model string
	// Tokens and Money are the call's maximum cost: its max_tokens and an
	// estimate of its input, at the model's price.
	Tokens int64
	Money  domain.Money
	// Priced is false when no price covers the model; a money budget over
	// the call then refuses it, since what it costs cannot be held.
	Priced bool
	// Unbounded is a call that set no max_tokens: it holds what is left of
	// each budget.
	Unbounded bool
}

// ReserveModelCall admits a model call of an activation and holds its
// maximum cost against each budget over the activation's worker, trigger
// streams and the org, returning the hold's id for RecordUsage or
// ReleaseModelCall ("" when no budget applies, which holds nothing). It
// refuses with a *domain.BudgetExceededError when a hard limit is reached
// (and records that the budget stopped the run), a *domain.BudgetBusyError
// when calls in flight hold what is left, and an invalid-model error when
// a money budget applies and the model has no price.
func (s *Store) ReserveModelCall(ctx context.Context, activationID string, r Reservation) (string, error) {
	// Without any budget nothing is held, and a call costs no write.
	var some []string
	if err := s.read(ctx).Model(&budgetRow{}).Limit(1).Pluck("scope", &some).Error; err != nil {
		return "", fmt.Errorf("reserve model call of %s: %w", activationID, err)
	}
	if len(some) == 0 {
		return "", nil
	}
	id := "rsv-" + domain.RandomSlug(16)
	var refusal error
	held := false
	err := s.write(ctx, func(tx *gorm.DB) error {
		refusal, held = nil, false
		act, rows, err := budgetsOver(tx, activationID)
		if err != nil || len(rows) == 0 {
			return err
		}
		now := s.Now()
		if err := tx.Where("expires_at <= ?", now).Delete(&reservationRow{}).Error; err != nil {
			return fmt.Errorf("lapsed holds: %w", err)
		}
		holds := make([]reservationRow, 0, len(rows))
		for _, b := range rows {
			h, err := s.holdOn(tx, b, r, now)
			if err != nil {
				refusal = err
				if stop, ok := errors.AsType[*domain.BudgetExceededError](err); ok {
					return s.recordStop(tx, act.ID, stop)
				}
				if _, ok := errors.AsType[*domain.BudgetBusyError](err); ok || errors.Is(err, domain.ErrInvalid) {
					return nil
				}
				return err
			}
			h.ID, h.ActivationID, h.ExpiresAt = id, act.ID, now.Add(ReservationTTL)
			holds = append(holds, h)
		}
		held = true
		return tx.Create(&holds).Error
	})
	switch {
	case err != nil:
		return "", fmt.Errorf("reserve model call of %s: %w", activationID, err)
	case refusal != nil:
		return "", refusal
	case !held:
		return "", nil
	}
	return id, nil
}

// budgetsOver reads an activation and the budgets over it, narrowest
// first.
func budgetsOver(tx *gorm.DB, activationID string) (activationRow, []budgetRow, error) {
	var act activationRow
	if err := tx.Select("id", "worker_id", "trigger_ids").Where("id = ?", activationID).Take(&act).Error; err != nil {
		return act, nil, notFoundOr(err, "activation", activationID)
	}
	streams, err := streamsOfActivation(tx, act)
	if err != nil {
		return act, nil, err
	}
	q := tx.Where("scope = ?", string(domain.BudgetOrg)).Or("scope = ? AND target = ?", string(domain.BudgetWorker), act.WorkerID)
	if len(streams) > 0 {
		q = q.Or("scope = ? AND target IN ?", string(domain.BudgetStream), streams)
	}
	var rows []budgetRow
	if err := q.Order("scope, target, period").Find(&rows).Error; err != nil {
		return act, nil, fmt.Errorf("budgets of %s: %w", act.ID, err)
	}
	slices.SortStableFunc(rows, func(a, b budgetRow) int { return scopeRank[a.Scope] - scopeRank[b.Scope] })
	return act, rows, nil
}

// holdOn is the hold a call takes on budget b, or why it may not: the
// limit is reached, what is left is held by calls in flight, or the call
// cannot be priced for a money limit.
func (s *Store) holdOn(tx *gorm.DB, b budgetRow, r Reservation, now time.Time) (reservationRow, error) {
	bud := b.toDomain()
	key := bud.Window.Key(now)
	spend, err := b.windowSpend(tx, key, bud.Window.Start(now))
	if err != nil {
		return reservationRow{}, err
	}
	if b.HardReached == key || bud.Hard.ReachedBy(spend) {
		st, err := s.budgetStatus(tx, b, now)
		if err != nil {
			return reservationRow{}, err
		}
		st.State = domain.BudgetExceeded
		return reservationRow{}, &domain.BudgetExceededError{Status: st}
	}
	if !r.Priced && bud.Hard.Money > 0 {
		return reservationRow{}, domain.Invalid("model", "%q has no price in llm.prices, and %s limits money (%s): a call's cost must be known to hold it against the budget. An operator adds the model to llm.prices or sets llm.prices.default",
			r.Model, bud.Name(), bud.Hard.Money)
	}
	var heldSum struct{ Tokens, Nanos, Calls int64 }
	if err := tx.Model(&reservationRow{}).Select("COALESCE(SUM(tokens), 0) AS tokens, COALESCE(SUM(nanos), 0) AS nanos, COUNT(*) AS calls").
		Where("scope = ? AND target = ? AND period = ? AND window_key = ? AND expires_at > ?", b.Scope, b.Target, b.Period, key, now).
		Scan(&heldSum).Error; err != nil {
		return reservationRow{}, fmt.Errorf("holds on %s: %w", bud.Name(), err)
	}
	committed := domain.Spend{InputTokens: spend.Tokens() + heldSum.Tokens, Money: spend.Money + domain.Money(heldSum.Nanos)}
	if bud.Hard.ReachedBy(committed) {
		st, err := s.budgetStatus(tx, b, now)
		if err != nil {
			return reservationRow{}, err
		}
		return reservationRow{}, &domain.BudgetBusyError{Status: st, Held: domain.Limit{Tokens: heldSum.Tokens, Money: domain.Money(heldSum.Nanos)}, Calls: heldSum.Calls}
	}
	h := reservationRow{Scope: b.Scope, Target: b.Target, Period: b.Period, WindowKey: key, Tokens: r.Tokens, Nanos: int64(r.Money)}
	if r.Unbounded {
		// No bound on what it may cost: it holds the rest of the limit.
		if bud.Hard.Tokens > 0 {
			h.Tokens = max(h.Tokens, bud.Hard.Tokens-committed.Tokens())
		}
		if bud.Hard.Money > 0 {
			h.Nanos = max(h.Nanos, int64(bud.Hard.Money-committed.Money))
		}
	}
	return h, nil
}

// windowSpend is the budget's spend in window key: its running sums, or
// the ledger when they count an earlier window.
func (r budgetRow) windowSpend(tx *gorm.DB, key string, start time.Time) (domain.Spend, error) {
	if r.SumWindow == key {
		return r.spend(), nil
	}
	return spendOf(tx, domain.BudgetScope(r.Scope), r.Target, start, nil)
}

// ReleaseModelCall gives back a call's hold without charging anything: the
// provider refused it, or it never reached the provider.
func (s *Store) ReleaseModelCall(ctx context.Context, id string) error {
	if id == "" {
		return nil
	}
	err := s.write(ctx, func(tx *gorm.DB) error { return tx.Where("id = ?", id).Delete(&reservationRow{}).Error })
	if err != nil {
		return fmt.Errorf("release model call %s: %w", id, err)
	}
	return nil
}

// RenewModelCall keeps a running call's hold for another ReservationTTL.
func (s *Store) RenewModelCall(ctx context.Context, id string) error {
	if id == "" {
		return nil
	}
	err := s.write(ctx, func(tx *gorm.DB) error {
		return tx.Model(&reservationRow{}).Where("id = ?", id).Update("expires_at", s.Now().Add(ReservationTTL)).Error
	})
	if err != nil {
		return fmt.Errorf("renew model call %s: %w", id, err)
	}
	return nil
}
