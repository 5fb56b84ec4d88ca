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

// Work states, as stored. Done work is deleted (the processor counts it),
// so the table holds what waits and what failed.
const (
	workPending = "pending"
	workFailed  = "failed"
)

// processorWorkRow is one input event a processor has to handle: the
// processors' outbox, written in the event's own transaction as triggers
// are, so an event is handed to every processor of its stream or to none.
type processorWorkRow struct {
	ID          int64  `gorm:"primaryKey;autoIncrement"`
	ProcessorID string `gorm:"not null;uniqueIndex:idx_processor_work,priority:1"`
	EventSeq    int64  `gorm:"not null;uniqueIndex:idx_processor_work,priority:2"`
	Status      string `gorm:"not null;index"`
	Error       string `gorm:"not null;default:''"`
	CreatedAt   time.Time
}

func (processorWorkRow) TableName() string { return "processor_work" }

// enqueueWorkSQL hands an event to every processor of its stream, in one
// statement: a stream without processors costs one indexed read.
const enqueueWorkSQL = `INSERT INTO processor_work (processor_id, event_seq, status, error, created_at)
	SELECT id, ?, '` + workPending + `', '', ? FROM processors WHERE input_stream = ?`

func (s *Store) enqueueWork(tx *gorm.DB, ev domain.Event) error {
	if kind, _ := domain.StreamKindOf(ev.StreamID); kind == domain.StreamActivations {
		return nil // no processor reads an activation log (processorInput)
	}
	if _, err := s.execFixed(tx, enqueueWorkSQL, ev.Seq, s.Now(), ev.StreamID); err != nil {
		return fmt.Errorf("hand %s to the processors of %s: %w", ev.ID, ev.StreamID, err)
	}
	return nil
}

// ProcessorWork is an input event a processor has yet to handle.
type ProcessorWork struct {
	ID        int64
	Processor domain.Processor
	Input     domain.Event
	// StreamKind is the transport kind of the input stream.
	StreamKind domain.TransportKind
}

// pendingWorkSQL is PendingWork's first read, run at each step of the
// dispatcher, so after nearly every commit; prepared, without GORM, as it
// almost always finds nothing (prepared.go).
const pendingWorkSQL = `SELECT id, processor_id, event_seq FROM processor_work WHERE status = '` + workPending + `' ORDER BY id LIMIT ?`

func (s *Store) pendingWorkRows(ctx context.Context, limit int) ([]processorWorkRow, error) {
	rs, err := s.queryFixed(s.read(ctx), pendingWorkSQL, limit)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var rows []processorWorkRow
	for rs.Next() {
		var r processorWorkRow
		if err := rs.Scan(&r.ID, &r.ProcessorID, &r.EventSeq); err != nil {
			return nil, err
		}
		rows = append(rows, r)
	}
	return rows, rs.Err()
}

// PendingWork returns up to limit pieces of work, oldest first.
func (s *Store) PendingWork(ctx context.Context, limit int) ([]ProcessorWork, error) {
	rows, err := s.pendingWorkRows(ctx, limit)
	if err != nil {
		return nil, fmt.Errorf("pending processor work: %w", err)
	}
	out := make([]ProcessorWork, 0, len(rows))
	procs := map[string]domain.Processor{}
	kinds := map[string]domain.TransportKind{}
	for _, r := range rows {
		p, ok := procs[r.ProcessorID]
		if !ok {
			var pr processorRow
			if err := s.read(ctx).Where("id = ?", r.ProcessorID).Take(&pr).Error; err != nil {
				return nil, fmt.Errorf("processor of work %d: %w", r.ID, mapErr(err))
			}
			p = pr.toDomain()
			procs[r.ProcessorID] = p
		}
		var er eventRow
		if err := s.read(ctx).Where("seq = ?", r.EventSeq).Take(&er).Error; err != nil {
			return nil, fmt.Errorf("input of work %d: %w", r.ID, mapErr(err))
		}
		ev, _ := er.toDomain()
		kind, ok := kinds[ev.StreamID]
		if !ok {
			st, err := s.GetStream(ctx, ev.StreamID)
			if err != nil {
				return nil, err
			}
			kind = st.Transport.Kind
			kinds[ev.StreamID] = kind
		}
		out = append(out, ProcessorWork{ID: r.ID, Processor: p, Input: ev, StreamKind: kind})
	}
	return out, nil
}

// CompleteWork appends what a processor made of its input to its outputs
// and retires the work, in one transaction: after a crash either both
// happened or neither, so the work is done again and nothing is doubled.
// Work another server completed first is left as it is. Each output
// carries the input's label as its readers receive it and the
// processor's own, the input's depth, and the input's id as CausedBy.
func (s *Store) CompleteWork(ctx context.Context, w ProcessorWork, outputs []domain.ProcessorOutput) error {
	err := s.write(ctx, func(tx *gorm.DB) error {
		res := tx.Where("id = ? AND status = ?", w.ID, workPending).Delete(&processorWorkRow{})
		if res.Error != nil || res.RowsAffected == 0 {
			return res.Error
		}
		label, err := newEventLabels(tx).of(w.Input)
		if err != nil {
			return err
		}
		label = label.Join(w.Processor.Label)
		for i, o := range outputs {
			if err := s.appendOutput(tx, w, i, o, label); err != nil {
				return err
			}
		}
		return tx.Model(&processorRow{}).Where("id = ?", w.Processor.ID).Update("processed", gorm.Expr("processed + 1")).Error
	})
	if err != nil {
		return fmt.Errorf("complete %s on %s: %w", w.Processor.ID, w.Input.ID, err)
	}
	return nil
}

// appendOutput appends the i-th output of w, once: its key is the
// processor, the input event and i.
func (s *Store) appendOutput(tx *gorm.DB, w ProcessorWork, i int, o domain.ProcessorOutput, label domain.Label) error {
	if !slices.Contains(w.Processor.Outputs, o.Stream) {
		return domain.Invalid("output", "%s is not among %s's outputs", o.Stream, w.Processor.ID)
	}
	readers, err := streamReaders(tx, o.Stream)
	if err != nil {
		return err
	}
	if !label.Within(readers) {
		return domain.Forbidden("%s would let the readers of %s read what only %v may (%s)", w.Processor.ID, o.Stream, label.Readers, label.Narrowed)
	}
	key := fmt.Sprintf("%s:%s:%d", w.Processor.ID, w.Input.ID, i)
	_, _, err = s.appendOnce(tx, domain.Event{StreamID: o.Stream, CausedBy: w.Input.ID, Message: o.Message},
		AppendOptions{dedupKey: key, label: label, depth: w.Input.Depth})
	return err
}

// FailWork records why a processor could not handle its input (its
// expression failed, what it made is not a valid message, it would widen
// who reads): the work is not tried again, and the processor counts it.
func (s *Store) FailWork(ctx context.Context, w ProcessorWork, reason error) error {
	why := reason.Error()
	err := s.write(ctx, func(tx *gorm.DB) error {
		res := tx.Model(&processorWorkRow{}).Where("id = ? AND status = ?", w.ID, workPending).Updates(map[string]any{"status": workFailed, "error": why})
		if res.Error != nil || res.RowsAffected == 0 {
			return res.Error
		}
		return tx.Model(&processorRow{}).Where("id = ?", w.Processor.ID).Updates(map[string]any{"failed": gorm.Expr("failed + 1"), "last_error": why}).Error
	})
	if err != nil {
		return fmt.Errorf("record failure of %s on %s: %w", w.Processor.ID, w.Input.ID, err)
	}
	return nil
}

// IsWorkFault reports whether err, from CompleteWork, is the processor's
// own doing — what it made is refused — rather than the database's.
func IsWorkFault(err error) bool {
	return errors.Is(err, domain.ErrInvalid) || errors.Is(err, domain.ErrForbidden) || errors.Is(err, domain.ErrNotFound)
}
