package store

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"

	"gorm.io/gorm"
)

// Group commit. Every write joins a queue; whichever writer next holds the
// write lock runs everything queued in one transaction, each write inside
// its own savepoint, and commits them all with one fsync. Writes that
// arrive while a batch commits make up the next one, so batches grow with
// the load and a lone write still commits at once. Each caller is answered
// only after its batch commits, so what is acknowledged is as durable as
// before (synchronous=FULL); a write that fails rolls back to its
// savepoint and fails alone. Writes run in arrival order on one
// connection, so sequence numbers stay monotonic and a write sees the
// effects of those before it in its batch.

// maxBatch bounds one transaction, so the first writes of a burst never
// wait on an unbounded number of others: at a fraction of a millisecond
// of CPU per write against one fsync per batch, 64 already shares the
// fsync almost to nothing.
const maxBatch = 64

// writeReq is one caller's write on its way through a batch.
type writeReq struct {
	ctx context.Context
	fn  func(tx *gorm.DB) error
	// err and panicked are the write's outcome, set before done closes.
	err      error
	panicked any
	done     chan struct{}
}

// result returns the write's error, or re-raises its panic in the caller's
// goroutine, where it would have happened without batching.
func (r *writeReq) result() error {
	if r.panicked != nil {
		panic(r.panicked)
	}
	return r.err
}

type writeQueue struct {
	mu   sync.Mutex
	reqs []*writeReq
}

func (q *writeQueue) push(r *writeReq) {
	q.mu.Lock()
	q.reqs = append(q.reqs, r)
	q.mu.Unlock()
}

// take removes and returns up to n writes, oldest first.
func (q *writeQueue) take(n int) []*writeReq {
	q.mu.Lock()
	defer q.mu.Unlock()
	n = min(n, len(q.reqs))
	out := q.reqs[:n:n]
	q.reqs = q.reqs[n:]
	return out
}

// writeGrouped queues fn and waits until a batch holding it has committed:
// its own, when it gets the write lock before an earlier holder took it.
func (s *Store) writeGrouped(ctx context.Context, fn func(tx *gorm.DB) error) error {
	req := &writeReq{ctx: ctx, fn: fn, done: make(chan struct{})}
	s.queue.push(req)
	for {
		select {
		case <-req.done:
			return req.result()
		case s.writeLock <- struct{}{}:
		}
		select {
		case <-req.done: // an earlier holder committed it
			<-s.writeLock
		default:
			s.commitQueued()
		}
	}
}

// commitQueued commits the oldest queued writes as one batch and then
// gives up the write lock, which the caller holds.
func (s *Store) commitQueued() {
	defer func() { <-s.writeLock }()
	for batch := s.queue.take(maxBatch); len(batch) > 0; {
		batch = s.commitBatch(batch)
	}
}

// commitBatch runs batch in one transaction and answers its writes. When
// SQLite aborts the transaction itself (I/O error, disk full), the writes
// that ran fail with it and those not yet run are returned for another.
func (s *Store) commitBatch(batch []*writeReq) (notRun []*writeReq) {
	// The transaction outlives any one caller: a cancelled caller must not
	// roll back its batch-mates.
	tx := s.begin(context.Background())
	if tx.Error != nil {
		answer(batch, fmt.Errorf("begin: %w", mapErr(tx.Error)))
		return nil
	}
	if err := s.dia.beginWrite(tx); err != nil {
		tx.Rollback()
		answer(batch, fmt.Errorf("begin: %w", mapErr(err)))
		return nil
	}
	for i, r := range batch {
		if err := s.runInSavepoint(tx, r); err != nil {
			tx.Rollback()
			answer(batch[:i+1], fmt.Errorf("transaction aborted: %w", mapErr(err)))
			return batch[i+1:]
		}
	}
	if err := tx.Commit().Error; err != nil {
		answer(batch, fmt.Errorf("commit: %w", mapErr(err)))
		return nil
	}
	s.writes.Add(int64(answer(batch, nil)))
	s.commits.Add(1)
	s.bc.notify()
	return nil
}

// runInSavepoint runs r's write in a savepoint of tx, undoing it if it
// fails or panics. It returns an error only when tx itself is lost.
func (s *Store) runInSavepoint(tx *gorm.DB, r *writeReq) (lost error) {
	if r.err = r.ctx.Err(); r.err != nil {
		return nil
	}
	conn := tx.Statement.ConnPool
	ctx := context.Background()
	if _, err := conn.ExecContext(ctx, "SAVEPOINT w"); err != nil {
		return err
	}
	defer func() {
		if p := recover(); p != nil {
			r.panicked = fmt.Sprintf("%v\n\nin a batched write:\n%s", p, debug.Stack())
		}
		if r.err != nil || r.panicked != nil {
			if _, err := conn.ExecContext(ctx, "ROLLBACK TO w"); err != nil {
				lost = err
				return
			}
		}
		if _, err := conn.ExecContext(ctx, "RELEASE w"); err != nil {
			lost = err
		}
	}()
	// Without cancel: a context cancelled mid-statement interrupts SQLite,
	// which may roll back the whole transaction, batch-mates and all.
	r.err = mapErr(r.fn(tx.WithContext(context.WithoutCancel(r.ctx))))
	return nil
}

// answer completes every write of batch; cause, when set, fails those that
// have no error of their own. It returns how many succeeded.
func answer(batch []*writeReq, cause error) (ok int) {
	for _, r := range batch {
		if cause != nil && r.err == nil && r.panicked == nil {
			r.err = cause
		}
		if r.err == nil && r.panicked == nil {
			ok++
		}
		close(r.done)
	}
	return ok
}
