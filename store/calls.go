package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

// The audit of tool calls. A call records itself as it ends, from
// whatever path it took (tools.Call), but it has no transaction of its own
// to join — a read makes none, a handler may make several — so records
// go through a small buffered writer: RecordCall queues the record and
// returns, and one goroutine writes whatever has queued in one
// transaction (which group commit shares with the other writes of the
// moment). Nothing is dropped: a full queue makes RecordCall wait, a
// failed write is retried, Close writes what is queued before the
// database closes, and a record that still cannot be written is logged
// as an error with the call it was. FlushCalls waits for what is queued,
// for a reader that must see it.

// callQueue bounds the records waiting for their write: past it a call
// waits for the database instead of memory growing without end.
// Each queued record is some 170 bytes the collector scans on every
// cycle, so the queue is no longer than a burst needs.
const callQueue = 1024

// maxCallBatch bounds one write of records.
const maxCallBatch = 256

// callLinger is how long the writer waits for more records before writing
// a batch that is not full: under steady load the audit then costs a
// write transaction every callLinger, not one per call. A flush does not
// wait.
const callLinger = 20 * time.Millisecond

// pruneEvery is how often the writer removes calls older than
// audit.retention.
const pruneEvery = time.Hour

// callRow is one audited tool call.
type callRow struct {
	Seq          int64     `gorm:"primaryKey;autoIncrement"`
	At           time.Time `gorm:"not null;index"`
	WorkerID     string    `gorm:"not null;index"`
	ActivationID string
	Tool         string `gorm:"not null;index"`
	Arguments    string `gorm:"not null"`
	Status       string `gorm:"not null"`
	Error        string
	ApprovalID   string
	DurationUs   int64
	Label        string
}

func (callRow) TableName() string { return "tool_calls" }

func (r callRow) toDomain() domain.ToolCall {
	return domain.ToolCall{Seq: r.Seq, At: r.At, Worker: r.WorkerID, Activation: r.ActivationID, Tool: r.Tool,
		Arguments: []byte(r.Arguments), Status: domain.CallStatus(r.Status), Error: r.Error, Approval: r.ApprovalID,
		DurationMs: float64(r.DurationUs) / 1000, Label: storedLabel(r.Label)}
}

// callItem is a record on its way, or a flush waiting for those before it.
type callItem struct {
	row   callRow
	flush chan struct{}
}

// callLog is the writer's state; it starts with the first record.
type callLog struct {
	once   sync.Once
	mu     sync.RWMutex
	closed bool
	in     chan callItem
	done   chan struct{}
}

// RecordCall queues the audit record of a call; its arguments are
// redacted (domain.RedactArgs, with the transports' secret config fields)
// before they are stored. It waits only while the queue is full.
func (s *Store) RecordCall(c domain.ToolCall) {
	if c.At.IsZero() {
		c.At = s.Now()
	}
	// The arguments are redacted by the writer, off the caller's path;
	// nothing reads them before.
	row := callRow{At: c.At.UTC(), WorkerID: c.Worker, ActivationID: c.Activation, Tool: c.Tool,
		Arguments: string(c.Arguments), Status: string(c.Status), Error: c.Error,
		ApprovalID: c.Approval, DurationUs: int64(c.DurationMs * 1000), Label: c.Label.Encode()}
	s.calls.once.Do(s.startCallLog)
	s.calls.mu.RLock()
	defer s.calls.mu.RUnlock()
	if s.calls.closed {
		// The store is closing: write it now rather than lose it.
		if err := s.writeCalls([]callRow{s.redacted(row)}); err != nil {
			s.log.Error("audit record not written", "worker", row.WorkerID, "tool", row.Tool, "status", row.Status, "err", err)
		}
		return
	}
	s.calls.in <- callItem{row: row}
}

// FlushCalls waits until every call recorded before it is written.
func (s *Store) FlushCalls(ctx context.Context) error {
	s.calls.once.Do(s.startCallLog)
	done := make(chan struct{})
	s.calls.mu.RLock()
	if s.calls.closed {
		s.calls.mu.RUnlock()
		return nil
	}
	s.calls.in <- callItem{flush: done}
	s.calls.mu.RUnlock()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// redacted is the row with its arguments' secrets redacted.
func (s *Store) redacted(r callRow) callRow {
	r.Arguments = string(domain.RedactArgs(json.RawMessage(r.Arguments), s.secretFields()))
	return r
}

// secretFields are the config keys any transport kind keeps secret.
func (s *Store) secretFields() []string {
	var out []string
	for _, spec := range s.transports.All() {
		out = append(out, spec.Secrets...)
	}
	return out
}

func (s *Store) startCallLog() {
	s.calls.in = make(chan callItem, callQueue)
	s.calls.done = make(chan struct{})
	go s.writeCallLog()
}

// closeCallLog stops taking records and writes what is queued.
func (s *Store) closeCallLog() {
	started := false
	s.calls.once.Do(func() {}) // a log never started stays so
	s.calls.mu.Lock()
	if s.calls.in != nil && !s.calls.closed {
		close(s.calls.in)
		started = true
	}
	s.calls.closed = true
	s.calls.mu.Unlock()
	if started {
		<-s.calls.done
	}
}

// writeCallLog writes queued records in batches until the log closes.
func (s *Store) writeCallLog() {
	defer close(s.calls.done)
	var lastPrune time.Time
	for first := range s.calls.in {
		batch, flushes := s.takeCalls(first)
		s.writeCallsRetrying(batch)
		if now := s.Now(); now.Sub(lastPrune) >= pruneEvery {
			lastPrune = now
			if _, err := s.PruneCalls(context.Background()); err != nil {
				s.log.Warn("prune audited calls", "err", err)
			}
		}
		// A flush returns once the batch and any pruning are done, so a
		// reader after it sees what the writer did.
		for _, f := range flushes {
			close(f)
		}
	}
}

// takeCalls gathers first and what arrives within callLinger after it,
// up to a batch; a flush ends the gathering at once.
func (s *Store) takeCalls(first callItem) ([]callRow, []chan struct{}) {
	var rows []callRow
	var flushes []chan struct{}
	add := func(it callItem) {
		if it.flush != nil {
			flushes = append(flushes, it.flush)
			return
		}
		rows = append(rows, s.redacted(it.row))
	}
	add(first)
	linger := time.NewTimer(callLinger)
	defer linger.Stop()
	for len(rows) < maxCallBatch && len(flushes) == 0 {
		select {
		case it, ok := <-s.calls.in:
			if !ok {
				return rows, flushes
			}
			add(it)
		case <-linger.C:
			return rows, flushes
		}
	}
	return rows, flushes
}

// writeCallsRetrying writes a batch, retrying while the database cannot
// take it (busy, briefly unavailable); records it gives up on are logged
// one by one, so an operator can see what the audit lacks.
func (s *Store) writeCallsRetrying(rows []callRow) {
	if len(rows) == 0 {
		return
	}
	var err error
	for wait := 50 * time.Millisecond; wait <= 3*time.Second; wait *= 2 {
		if err = s.writeCalls(rows); err == nil || errors.Is(err, domain.ErrInvalid) {
			break
		}
		time.Sleep(wait)
	}
	if err == nil {
		return
	}
	for _, r := range rows {
		s.log.Error("audit record not written", "at", r.At, "worker", r.WorkerID, "tool", r.Tool, "status", r.Status, "err", err)
	}
}

// insertCallSQL writes one record; a prepared statement per row costs
// less than GORM building a batch's insert by reflection, inside the
// serial part of a group commit (prepared.go).
const insertCallSQL = `INSERT INTO tool_calls (at, worker_id, activation_id, tool, arguments, status, error, approval_id, duration_us, label)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

func (s *Store) writeCalls(rows []callRow) error {
	return s.write(context.Background(), func(tx *gorm.DB) error {
		for _, r := range rows {
			if _, err := s.execFixed(tx, insertCallSQL, r.At, r.WorkerID, r.ActivationID, r.Tool, r.Arguments,
				r.Status, r.Error, r.ApprovalID, r.DurationUs, r.Label); err != nil {
				return err
			}
		}
		return nil
	})
}

// CallFilter narrows ListCalls; the zero value lists the newest calls.
type CallFilter struct {
	Worker, Tool string
	// QuietTools leaves out the calls of these tools that ended ok (the
	// reads a page makes as it renders), keeping their failures.
	QuietTools []string
	// Among, when not nil, keeps only these workers' calls (what a viewer
	// may see).
	Among []string
	// Since keeps calls made at or after it; zero keeps all.
	Since time.Time
	// Before keeps calls older than the one of this seq (a page's
	// cursor); 0 keeps all.
	Before int64
	// Limit bounds the calls listed; 0 is DefaultCallLimit.
	Limit int
}

// DefaultCallLimit is how many calls ListCalls lists when not told.
const DefaultCallLimit = 100

// ListCalls lists audited calls, newest first.
func (s *Store) ListCalls(ctx context.Context, f CallFilter) ([]domain.ToolCall, error) {
	if f.Limit <= 0 {
		f.Limit = DefaultCallLimit
	}
	q := s.db.WithContext(ctx).Model(&callRow{})
	if f.Worker != "" {
		q = q.Where("worker_id = ?", f.Worker)
	}
	if f.Tool != "" {
		q = q.Where("tool = ?", f.Tool)
	}
	if len(f.QuietTools) > 0 {
		q = q.Where("NOT (tool IN ? AND status = ?)", f.QuietTools, string(domain.CallOK))
	}
	if f.Among != nil {
		if len(f.Among) == 0 {
			return []domain.ToolCall{}, nil
		}
		q = q.Where("worker_id IN ?", f.Among)
	}
	if !f.Since.IsZero() {
		q = q.Where("at >= ?", f.Since.UTC())
	}
	if f.Before > 0 {
		q = q.Where("seq < ?", f.Before)
	}
	var rows []callRow
	if err := q.Order("seq DESC").Limit(f.Limit).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("list audited calls: %w", mapErr(err))
	}
	out := make([]domain.ToolCall, len(rows))
	for i, r := range rows {
		out[i] = r.toDomain()
	}
	return out, nil
}

// PruneCalls removes calls older than audit.retention and says how many.
func (s *Store) PruneCalls(ctx context.Context) (int64, error) {
	cutoff := s.Now().Add(-s.DurationSetting(ctx, domain.AuditRetentionSetting))
	var n int64
	err := s.write(ctx, func(tx *gorm.DB) error {
		res := tx.Where("at < ?", cutoff).Delete(&callRow{})
		n = res.RowsAffected
		return res.Error
	})
	if err != nil {
		return 0, fmt.Errorf("prune audited calls: %w", err)
	}
	return n, nil
}
