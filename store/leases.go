package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

// RenewLease extends a running activation's lease to now+d. It reports
// false when the activation is no longer running — cancelled, or reaped
// after its lease lapsed — so whoever runs its agent stops it.
func (s *Store) RenewLease(ctx context.Context, id string, d time.Duration) (bool, error) {
	until := s.Now().Add(d)
	var n int64
	err := s.write(ctx, func(tx *gorm.DB) error {
		res := tx.Model(&activationRow{}).Where("id = ? AND status = ?", id, string(domain.ActivationRunning)).Update("lease_until", &until)
		n = res.RowsAffected
		return res.Error
	})
	if err != nil {
		return false, fmt.Errorf("renew the lease of activation %s: %w", id, err)
	}
	return n == 1, nil
}

// TakeLapsedLease takes the lease of a running activation whose lease
// lapsed (or was never taken), for a server adopting a run whose agent
// goes on without its own; false when it is not lapsed — another server
// took it first — or no longer running.
func (s *Store) TakeLapsedLease(ctx context.Context, id string, d time.Duration) (bool, error) {
	now := s.Now()
	until := now.Add(d)
	var n int64
	err := s.write(ctx, func(tx *gorm.DB) error {
		res := tx.Model(&activationRow{}).Where("id = ? AND status = ? AND (lease_until IS NULL OR lease_until < ?)", id, string(domain.ActivationRunning), now).
			Update("lease_until", &until)
		n = res.RowsAffected
		return res.Error
	})
	if err != nil {
		return false, fmt.Errorf("take the lease of activation %s: %w", id, err)
	}
	return n == 1, nil
}

// LapsedActivations lists running activations whose lease has lapsed:
// no server has vouched for their agent within a lease period.
func (s *Store) LapsedActivations(ctx context.Context) ([]domain.Activation, error) {
	var rows []activationRow
	err := s.read(ctx).Where("status = ? AND lease_until IS NOT NULL AND lease_until < ?", string(domain.ActivationRunning), s.Now()).
		Order("started_at, id").Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("lapsed activations: %w", err)
	}
	return mapRows(rows, activationRow.toDomain), nil
}

// StoppedActivations returns those of ids that are no longer running, so
// a server still running their agents stops them.
func (s *Store) StoppedActivations(ctx context.Context, ids []string) ([]string, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	var out []string
	err := s.read(ctx).Model(&activationRow{}).Where("id IN ? AND status <> ?", ids, string(domain.ActivationRunning)).Order("id").Pluck("id", &out).Error
	if err != nil {
		return nil, fmt.Errorf("stopped activations: %w", err)
	}
	return out, nil
}

// Ending says how EndActivation ends a running activation from outside
// its run: with which status and error, and whether its triggers are
// dropped (with Error as their reason) rather than handed back to pending.
// Actor, when set, must manage the activation's worker on the chart.
type Ending struct {
	Status domain.ActivationStatus
	Error  string
	Drop   bool
	Actor  string
}

// EndActivation ends a running activation that its run will not finish
// itself — its lease lapsed, or someone cancelled it — revokes its token,
// appends logs and hands its triggers back to pending (or drops them), in
// one transaction. An activation that is not running is a conflict; the
// run's own FinishActivation, if it still comes, is then a no-op.
func (s *Store) EndActivation(ctx context.Context, id string, e Ending, logs ...domain.Event) (domain.Activation, error) {
	var out domain.Activation
	err := s.write(ctx, func(tx *gorm.DB) error {
		var row activationRow
		if err := tx.Where("id = ?", id).Take(&row).Error; err != nil {
			return notFoundOr(err, "activation", id)
		}
		if err := newAuthz(tx).manages(e.Actor, row.WorkerID); err != nil {
			return err
		}
		a := row.toDomain()
		a.Status, a.Error = e.Status, e.Error
		closed, err := s.closeActivation(tx, a, logs...)
		if err != nil {
			return err
		}
		if !closed {
			return fmt.Errorf("activation %s is %s, not running: %w", id, row.Status, domain.ErrConflict)
		}
		set := map[string]any{"status": triggerPending}
		if e.Drop {
			set = map[string]any{"status": triggerDropped, "reason": e.Error}
		}
		if err := tx.Model(&triggerRow{}).Where("activation_id = ? AND status = ?", id, triggerClaimed).Updates(set).Error; err != nil {
			return err
		}
		if err := tx.Where("id = ?", id).Take(&row).Error; err != nil {
			return err
		}
		out = row.toDomain()
		return nil
	})
	if err != nil {
		return domain.Activation{}, fmt.Errorf("end activation %s: %w", id, err)
	}
	return out, nil
}

// RetryActivation hands the triggers an ended activation closed (done or
// dropped) back to pending, attempts and backoff reset, and returns them.
// Triggers a later run has taken since are that run's; a running
// activation is a conflict.
func (s *Store) RetryActivation(ctx context.Context, id string) ([]domain.QueuedTrigger, error) {
	var out []domain.QueuedTrigger
	err := s.write(ctx, func(tx *gorm.DB) error {
		var row activationRow
		if err := tx.Where("id = ?", id).Take(&row).Error; err != nil {
			return notFoundOr(err, "activation", id)
		}
		if row.Status == string(domain.ActivationRunning) {
			return fmt.Errorf("activation %s is still running; cancel it first: %w", id, domain.ErrConflict)
		}
		var ids []int64
		if err := tx.Model(&triggerRow{}).Where("activation_id = ? AND status IN ?", id, []string{triggerDone, triggerDropped}).Order("id").Pluck("id", &ids).Error; err != nil {
			return err
		}
		if len(ids) == 0 {
			return fmt.Errorf("activation %s has no closed triggers to run again (a later run took them): %w", id, domain.ErrConflict)
		}
		var err error
		out, err = setTriggers(tx, ids, map[string]any{"status": triggerPending, "attempts": 0, "not_before": nil, "last_error": "", "reason": ""})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("retry activation %s: %w", id, err)
	}
	return out, nil
}
