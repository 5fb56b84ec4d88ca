package store

import (
	"context"
	"fmt"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

// maxChain bounds how far CausalChain walks back, whatever max_depth is.
const maxChain = 64

// DeepPark says when and how ParkTooDeep parks a worker's triggers.
type DeepPark struct {
	// MaxDepth is dispatch.max_depth: a run whose triggers are all deeper
	// does not start.
	MaxDepth int
	Reason   string
	// Incident renders the owner's notice from the parked triggers and the
	// chain that led to the deepest of them, first event first.
	Incident func(parked []domain.QueuedTrigger, chain []domain.Event) domain.Message
}

// ParkTooDeep parks the triggers a run of worker would take when every
// one of them is deeper than p.MaxDepth, and notifies the owner, in one
// transaction: a loop between AI workers stops, visibly, and waits for a
// person (`helix-org triggers release|drop`). It returns the parked
// triggers, none when the run may start. A trigger no deeper than the
// limit lets the whole batch run: a person or the outside world spoke.
func (s *Store) ParkTooDeep(ctx context.Context, worker string, p DeepPark) ([]domain.QueuedTrigger, error) {
	// Nearly every run has no trigger that deep: a read says so without
	// queueing for the write lock, which every server shares.
	var deep int64
	if err := s.read(ctx).Model(&triggerRow{}).Where("worker_id = ? AND status = ? AND depth > ?", worker, triggerPending, p.MaxDepth).
		Count(&deep).Error; err != nil {
		return nil, fmt.Errorf("park triggers of %s past max depth: %w", worker, err)
	}
	if deep == 0 {
		return nil, nil
	}
	var out []domain.QueuedTrigger
	err := s.write(ctx, func(tx *gorm.DB) error {
		held, err := s.budgetHolds(tx)
		if err != nil {
			return err
		}
		var rows []triggerRow
		if err := held.exclude(tx, tx.Where("worker_id = ? AND status = ?", worker, triggerPending)).Order("id").Find(&rows).Error; err != nil {
			return err
		}
		deepest := -1
		ids := make([]int64, 0, len(rows))
		for i, r := range rows {
			if r.Depth <= p.MaxDepth || (r.NotBefore != nil && r.NotBefore.After(s.Now())) {
				return nil // runs, or waits for its retry like any other
			}
			if deepest < 0 || r.Depth > rows[deepest].Depth {
				deepest = i
			}
			ids = append(ids, r.ID)
		}
		if len(ids) == 0 {
			return nil
		}
		if err := tx.Model(&triggerRow{}).Where("id IN ?", ids).Updates(map[string]any{"status": triggerParked, "reason": p.Reason, "not_before": nil}).Error; err != nil {
			return err
		}
		var after []queuedRow
		if err := queued(tx).Where("triggers.id IN ?", ids).Scan(&after).Error; err != nil {
			return err
		}
		out = mapRows(after, queuedRow.toDomain)
		chain, err := causalChain(tx, rows[deepest].EventSeq)
		if err != nil {
			return err
		}
		// Without an owner yet the triggers are still parked: the loop
		// stops either way.
		if ok, err := exists(tx, &workerRow{}, OwnerWorker); err != nil || !ok {
			return err
		}
		_, err = s.notifyTx(tx, OwnerWorker, p.Incident(out, chain), chain[0].ID)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("park triggers of %s past depth %d: %w", worker, p.MaxDepth, err)
	}
	return out, nil
}

// CausalChain returns the events that led to the event with seq, first
// (the human, inbound or system event at depth 0) to last: each step back
// is the deepest trigger of the run that published the one after it.
func (s *Store) CausalChain(ctx context.Context, seq int64) ([]domain.Event, error) {
	chain, err := causalChain(s.read(ctx), seq)
	if err != nil {
		return nil, fmt.Errorf("causal chain of event %d: %w", seq, err)
	}
	return chain, nil
}

func causalChain(tx *gorm.DB, seq int64) ([]domain.Event, error) {
	var rev []domain.Event
	for range maxChain {
		var row eventRow
		if err := tx.Where("seq = ?", seq).Take(&row).Error; err != nil {
			return nil, mapErr(err)
		}
		ev, err := row.toDomain()
		if err != nil {
			return nil, err
		}
		rev = append(rev, ev)
		if ev.Depth == 0 || ev.CausedBy == "" {
			break
		}
		// The run's deepest trigger made this event as deep as it is.
		var prev []int64
		if err := tx.Model(&triggerRow{}).Joins("JOIN events ON events.seq = triggers.event_seq").
			Where("triggers.activation_id = ? AND triggers.worker_id = ?", ev.CausedBy, ev.Source).
			Order("events.depth DESC, triggers.id").Limit(1).Pluck("triggers.event_seq", &prev).Error; err != nil {
			return nil, err
		}
		if len(prev) == 0 {
			break
		}
		seq = prev[0]
	}
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	return rev, nil
}
