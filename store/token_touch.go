package store

import (
	"context"
	"sync"
	"time"

	"gorm.io/gorm"
)

// touchDelay is how long a token's use waits to be written, so that the
// uses of a burst (a cold start's first requests, a fleet of runs) share
// one write that none of them waits for.
const touchDelay = 500 * time.Millisecond

// tokenTouches writes when tokens were last used off the request path:
// it is bookkeeping for `token list`, so no call waits on a write for
// it. Readers of the column flush it first (ListTokens), and Close
// writes what is pending.
type tokenTouches struct {
	mu      sync.Mutex
	pending map[string]time.Time // token hash → when it was used
	timer   *time.Timer          // armed while uses wait and no write runs
	writing bool
	done    sync.Cond // on mu (Open), broadcast when a write ends
	closed  bool
}

// touchToken records that a token was just used, at most once a minute.
func (s *Store) touchToken(row tokenRow) {
	now := s.Now()
	if row.LastUsedAt != nil && now.Sub(*row.LastUsedAt) < lastUsedEvery {
		return
	}
	t := &s.touches
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return
	}
	if t.pending == nil {
		t.pending = map[string]time.Time{}
	}
	t.pending[row.Hash] = now
	if t.timer == nil && !t.writing {
		t.timer = time.AfterFunc(touchDelay, s.writeTouches)
	}
}

// writeTouches writes what is pending until nothing is.
func (s *Store) writeTouches() {
	t := &s.touches
	t.mu.Lock()
	t.timer = nil
	if t.writing {
		t.mu.Unlock()
		return
	}
	t.writing = true
	for len(t.pending) > 0 {
		batch := t.pending
		t.pending = nil
		t.mu.Unlock()
		err := s.write(context.Background(), func(tx *gorm.DB) error {
			for hash, at := range batch {
				err := tx.Model(&tokenRow{}).
					Where("hash = ? AND (last_used_at IS NULL OR last_used_at < ?)", hash, at.Add(-lastUsedEvery)).
					Update("last_used_at", at).Error
				if err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			s.log.Warn("record token use", "tokens", len(batch), "err", err)
		}
		t.mu.Lock()
	}
	t.writing = false
	t.done.Broadcast()
	t.mu.Unlock()
}

// flushTouches writes every use recorded so far, now.
func (s *Store) flushTouches() {
	t := &s.touches
	t.mu.Lock()
	if t.timer != nil && t.timer.Stop() {
		t.timer = nil
		t.mu.Unlock()
		s.writeTouches()
		t.mu.Lock()
	}
	// A timer that fired, or a write under way, ends with a broadcast.
	for t.timer != nil || t.writing {
		t.done.Wait()
	}
	t.mu.Unlock()
}

// closeTouches writes what is pending and takes no more.
func (s *Store) closeTouches() {
	s.touches.mu.Lock()
	s.touches.closed = true
	s.touches.mu.Unlock()
	s.flushTouches()
}
