package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

type workerRow struct {
	ID          string       `gorm:"primaryKey"`
	Kind        string       `gorm:"not null"`
	PositionID  string       `gorm:"not null;index"`
	Position    *positionRow `gorm:"foreignKey:PositionID"`
	Name        string       `gorm:"not null"`
	Identity    string       `gorm:"not null"`
	HiredBy     string
	HiredAt     time.Time
	DismissedAt *time.Time
}

func (workerRow) TableName() string { return "workers" }

func (r workerRow) toDomain() domain.Worker {
	w := domain.Worker{ID: r.ID, Kind: domain.WorkerKind(r.Kind), PositionID: r.PositionID, Name: r.Name,
		Identity: r.Identity, HiredBy: r.HiredBy, HiredAt: r.HiredAt.UTC()}
	if r.DismissedAt != nil {
		t := r.DismissedAt.UTC()
		w.DismissedAt = &t
	}
	return w
}

// HireWorker stores a new hire and its initial grants in one transaction.
// The position must be below the hirer's, and each grant is capped at the
// hirer's own grant of that tool. It follows the streams the position's
// last dismissed worker followed (succeed). An AI hire also gets its
// activation-log stream, which the hirer follows.
func (s *Store) HireWorker(ctx context.Context, actor string, w domain.Worker, grants []string) (domain.Worker, error) {
	if err := w.Validate(); err != nil {
		return domain.Worker{}, err
	}
	var row workerRow
	err := s.write(ctx, func(tx *gorm.DB) (err error) {
		row, err = s.hireTx(tx, actor, w, grants)
		return err
	})
	if err != nil {
		return domain.Worker{}, fmt.Errorf("hire worker: %w", err)
	}
	return row.toDomain(), nil
}

// hireTx is HireWorker inside a transaction, for a write that hires as
// one of its steps (an invitation).
func (s *Store) hireTx(tx *gorm.DB, actor string, w domain.Worker, grants []string) (workerRow, error) {
	var row workerRow
	err := func() error {
		if ok, err := exists(tx, &positionRow{}, w.PositionID); err != nil || !ok {
			return orNotFound(err, "position", w.PositionID)
		}
		if err := newAuthz(tx).places(actor, w.PositionID); err != nil {
			return err
		}
		id, err := pickID(tx, &workerRow{}, "worker", domain.PrefixWorker, w.ID, w.Name)
		if err != nil {
			return err
		}
		row = workerRow{ID: id, Kind: string(w.Kind), PositionID: w.PositionID, Name: w.Name,
			Identity: w.Identity, HiredBy: actor, HiredAt: s.Now()}
		if err := tx.Create(&row).Error; err != nil {
			return err
		}
		for _, tool := range grants {
			g, err := s.capGrantTx(tx, actor, domain.Grant{WorkerID: id, Tool: tool})
			if err != nil {
				return err
			}
			if err := s.grantTx(tx, actor, g); err != nil {
				return err
			}
		}
		if err := s.succeed(tx, actor, id, w.PositionID); err != nil {
			return err
		}
		if w.Kind == domain.WorkerAI {
			if err := s.createActivationStream(tx, actor, id); err != nil {
				return err
			}
		}
		ev, err := s.auditEvent(tx, Change{Action: "hire_worker", Actor: actor, Target: id,
			After: map[string]any{"worker": row.toDomain(), "grants": grants}})
		if err != nil || w.Kind != domain.WorkerAI {
			return err
		}
		// A new AI hire is woken once so it can introduce itself or set up.
		return s.insertTrigger(tx, id, ev, domain.TriggerHire)
	}()
	return row, err
}

func (s *Store) createActivationStream(tx *gorm.DB, actor, workerID string) error {
	st := streamRow{ID: domain.ActivationStreamPrefix + workerID, Name: "activations " + workerID,
		Description:   "Activation log of " + workerID + ": runs, tool calls and results. Never wakes anyone.",
		TransportKind: string(domain.TransportLocal), TransportConfig: "{}", CreatedBy: actor, CreatedAt: s.Now()}
	if err := tx.Create(&st).Error; err != nil {
		return err
	}
	if actor == "" {
		return nil
	}
	if ok, err := exists(tx, &workerRow{}, actor); err != nil || !ok {
		return err
	}
	return tx.Create(&subscriptionRow{WorkerID: actor, StreamID: st.ID, CreatedAt: s.Now()}).Error
}

// DismissWorker ends a hire. The record stays so history keeps pointing at
// it. Only a worker above it (or the owner) dismisses it; nobody dismisses
// itself.
func (s *Store) DismissWorker(ctx context.Context, actor, id string) (domain.Worker, error) {
	var after workerRow
	err := s.write(ctx, func(tx *gorm.DB) error {
		var before workerRow
		if err := tx.Where("id = ?", id).Take(&before).Error; err != nil {
			return notFoundOr(err, "worker", id)
		}
		if actor == id {
			return domain.Forbidden("%s cannot dismiss itself; a worker above it can", id)
		}
		if err := newAuthz(tx).manages(actor, id); err != nil {
			return err
		}
		if before.DismissedAt != nil {
			return fmt.Errorf("worker %q was already dismissed: %w", id, domain.ErrConflict)
		}
		after = before
		now := s.Now()
		after.DismissedAt = &now
		if err := tx.Save(&after).Error; err != nil {
			return err
		}
		return s.audit(tx, Change{Action: "dismiss_worker", Actor: actor, Target: id, Before: before.toDomain(), After: after.toDomain()})
	})
	if err != nil {
		return domain.Worker{}, fmt.Errorf("dismiss worker: %w", err)
	}
	return after.toDomain(), nil
}

// UpdateIdentity replaces a worker's identity markdown: its own, or that of
// a worker below it.
func (s *Store) UpdateIdentity(ctx context.Context, actor, id, identity string) (domain.Worker, error) {
	var after workerRow
	err := s.write(ctx, func(tx *gorm.DB) error {
		var before workerRow
		if err := tx.Where("id = ?", id).Take(&before).Error; err != nil {
			return notFoundOr(err, "worker", id)
		}
		if actor != id {
			if err := newAuthz(tx).manages(actor, id); err != nil {
				return err
			}
		}
		after = before
		after.Identity = identity
		if err := after.toDomain().Validate(); err != nil {
			return err
		}
		if err := tx.Save(&after).Error; err != nil {
			return err
		}
		return s.audit(tx, Change{Action: "update_identity", Actor: actor, Target: id,
			Before: map[string]string{"identity": before.Identity}, After: map[string]string{"identity": after.Identity}})
	})
	if err != nil {
		return domain.Worker{}, fmt.Errorf("update identity: %w", err)
	}
	return after.toDomain(), nil
}

// GetWorker returns one worker, dismissed or not.
func (s *Store) GetWorker(ctx context.Context, id string) (domain.Worker, error) {
	var r workerRow
	if err := s.read(ctx).Where("id = ?", id).Take(&r).Error; err != nil {
		return domain.Worker{}, notFoundOr(err, "worker", id)
	}
	return r.toDomain(), nil
}

// WorkerFilter narrows ListWorkers.
type WorkerFilter struct {
	IncludeDismissed bool
	PositionID       string
	Kind             domain.WorkerKind
}

// ListWorkers returns workers by id.
func (s *Store) ListWorkers(ctx context.Context, f WorkerFilter) ([]domain.Worker, error) {
	q := s.read(ctx).Order("id")
	if !f.IncludeDismissed {
		q = q.Where("dismissed_at IS NULL")
	}
	if f.PositionID != "" {
		q = q.Where("position_id = ?", f.PositionID)
	}
	if f.Kind != "" {
		q = q.Where("kind = ?", string(f.Kind))
	}
	var rows []workerRow
	if err := q.Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("list workers: %w", err)
	}
	return mapRows(rows, workerRow.toDomain), nil
}
