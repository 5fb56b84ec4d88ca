package store

import (
	"context"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

// maxTriggerError bounds the last error kept on a trigger.
const maxTriggerError = 2000

// Requeue says what becomes of the triggers of a run whose agent never
// started: each counts one more attempt and keeps Error as its last
// error; those in Park are parked with ParkReason, the rest wait until
// NotBefore.
type Requeue struct {
	Error      string
	NotBefore  time.Time
	Park       []int64
	ParkReason string
}

// RequeueActivation records an activation whose agent never started as
// it ended (failed, with its error), revokes its token, appends its log
// entries and hands its triggers back as rq says, in one transaction.
// Nothing is closed as done: the triggers run again or wait, parked, for
// an operator. An activation already ended is left as it is.
func (s *Store) RequeueActivation(ctx context.Context, a domain.Activation, rq Requeue, logs ...domain.Event) error {
	lastErr := rq.Error
	if len(lastErr) > maxTriggerError {
		lastErr = lastErr[:maxTriggerError] + "…"
	}
	err := s.write(ctx, func(tx *gorm.DB) error {
		if closed, err := s.closeActivation(tx, a, logs...); err != nil || !closed {
			return err
		}
		if err := returnSteeringTx(tx, a.ID); err != nil {
			return err
		}
		claimed := func() *gorm.DB {
			return tx.Model(&triggerRow{}).Where("activation_id = ? AND status = ?", a.ID, triggerClaimed)
		}
		if len(rq.Park) > 0 {
			if err := claimed().Where("id IN ?", rq.Park).Updates(map[string]any{"status": triggerParked, "attempts": gorm.Expr("attempts + 1"),
				"last_error": lastErr, "reason": rq.ParkReason, "not_before": nil}).Error; err != nil {
				return err
			}
		}
		notBefore := rq.NotBefore.UTC()
		return claimed().Updates(map[string]any{"status": triggerPending, "attempts": gorm.Expr("attempts + 1"),
			"last_error": lastErr, "not_before": &notBefore}).Error
	})
	if err != nil {
		return fmt.Errorf("requeue triggers of activation %s: %w", a.ID, err)
	}
	return nil
}

// TriggerQuery filters ListTriggers; empty fields match everything.
type TriggerQuery struct {
	Worker   string
	Statuses []domain.TriggerStatus
}

// queuedRow is a trigger joined with the event it is for.
type queuedRow struct {
	ID           int64
	WorkerID     string
	Kind         string
	Status       string
	ActivationID string
	CreatedAt    time.Time
	Attempts     int
	NotBefore    *time.Time
	LastError    string
	Reason       string
	Depth        int
	EventID      string
	StreamID     string
}

func (r queuedRow) toDomain() domain.QueuedTrigger {
	q := domain.QueuedTrigger{ID: r.ID, WorkerID: r.WorkerID, Kind: domain.TriggerKind(r.Kind), Status: domain.TriggerStatus(r.Status),
		EventID: r.EventID, StreamID: r.StreamID, Attempts: r.Attempts, Depth: r.Depth, LastError: r.LastError, Reason: r.Reason,
		ActivationID: r.ActivationID, CreatedAt: r.CreatedAt.UTC()}
	if r.NotBefore != nil {
		t := r.NotBefore.UTC()
		q.NotBefore = &t
	}
	return q
}

func queued(tx *gorm.DB) *gorm.DB {
	return tx.Table("triggers").Joins("JOIN events ON events.seq = triggers.event_seq").
		Select("triggers.id, triggers.worker_id, triggers.kind, triggers.status, triggers.activation_id, triggers.created_at, " +
			"triggers.attempts, triggers.not_before, triggers.last_error, triggers.reason, triggers.depth, events.id AS event_id, events.stream_id AS stream_id").
		Order("triggers.id")
}

// ListTriggers lists triggers, oldest first, with the event each is for.
func (s *Store) ListTriggers(ctx context.Context, q TriggerQuery) ([]domain.QueuedTrigger, error) {
	tx := queued(s.read(ctx))
	if q.Worker != "" {
		tx = tx.Where("triggers.worker_id = ?", q.Worker)
	}
	if len(q.Statuses) > 0 {
		tx = tx.Where("triggers.status IN ?", q.Statuses)
	}
	var rows []queuedRow
	if err := tx.Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("list triggers: %w", err)
	}
	out := mapRows(rows, queuedRow.toDomain)
	return out, s.noteBudgetHolds(ctx, out)
}

// TriggerSelection names the triggers an operator acts on: by id, or
// every waiting (pending or parked) trigger of one worker.
type TriggerSelection struct {
	IDs    []int64
	Worker string
}

// waiting are the states an operator may release or drop a trigger from.
var waiting = []string{triggerPending, triggerParked}

// ReleaseTriggers hands waiting triggers back to pending with their
// attempts, backoff, reason and causal depth cleared, so the next step
// runs them — past dispatch.max_depth too: the operator chose to let the
// chain go on. It returns them as they now are.
func (s *Store) ReleaseTriggers(ctx context.Context, sel TriggerSelection) ([]domain.QueuedTrigger, error) {
	return s.settleTriggers(ctx, sel, "release", map[string]any{"status": triggerPending, "attempts": 0, "not_before": nil, "last_error": "", "reason": "", "depth": 0})
}

// DropTriggers closes waiting triggers without a run, keeping reason on
// each. It returns them as they now are.
func (s *Store) DropTriggers(ctx context.Context, sel TriggerSelection, reason string) ([]domain.QueuedTrigger, error) {
	return s.settleTriggers(ctx, sel, "drop", map[string]any{"status": triggerDropped, "not_before": nil, "reason": reason})
}

// settleTriggers applies set to the selected triggers, all or none: an
// unknown id, an unknown worker or a trigger that is not waiting fails
// the whole call.
func (s *Store) settleTriggers(ctx context.Context, sel TriggerSelection, verb string, set map[string]any) ([]domain.QueuedTrigger, error) {
	var out []domain.QueuedTrigger
	err := s.write(ctx, func(tx *gorm.DB) error {
		rows, err := selectWaiting(tx, sel)
		if err != nil || len(rows) == 0 {
			return err
		}
		ids := make([]int64, len(rows))
		for i, r := range rows {
			ids[i] = r.ID
		}
		out, err = setTriggers(tx, ids, set)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("%s triggers: %w", verb, err)
	}
	return out, nil
}

// setTriggers updates the triggers ids and reads them back as the queue
// shows them.
func setTriggers(tx *gorm.DB, ids []int64, set map[string]any) ([]domain.QueuedTrigger, error) {
	if err := tx.Model(&triggerRow{}).Where("id IN ?", ids).Updates(set).Error; err != nil {
		return nil, err
	}
	var after []queuedRow
	if err := queued(tx).Where("triggers.id IN ?", ids).Scan(&after).Error; err != nil {
		return nil, err
	}
	return mapRows(after, queuedRow.toDomain), nil
}

func selectWaiting(tx *gorm.DB, sel TriggerSelection) ([]triggerRow, error) {
	var rows []triggerRow
	if sel.Worker != "" {
		if ok, err := exists(tx, &workerRow{}, sel.Worker); err != nil || !ok {
			if err == nil {
				err = domain.NotFound("worker", sel.Worker)
			}
			return nil, err
		}
		err := tx.Where("worker_id = ? AND status IN ?", sel.Worker, waiting).Order("id").Find(&rows).Error
		return rows, err
	}
	if len(sel.IDs) == 0 {
		return nil, domain.Invalid("ids", "name at least one trigger id, or a worker")
	}
	if err := tx.Where("id IN ?", sel.IDs).Order("id").Find(&rows).Error; err != nil {
		return nil, err
	}
	for _, id := range sel.IDs {
		i := slices.IndexFunc(rows, func(r triggerRow) bool { return r.ID == id })
		switch {
		case i < 0:
			return nil, domain.NotFound("trigger", fmt.Sprint(id))
		case !slices.Contains(waiting, rows[i].Status):
			return nil, fmt.Errorf("trigger %d is %s, not pending or parked: %w", id, rows[i].Status, domain.ErrConflict)
		}
	}
	return rows, nil
}
