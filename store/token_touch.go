package store

import (
	"context"
	"sync"
	"time"

	"gorm.io/gorm"
)

// tokenTouches writes when tokens were last used off the request path:
// it is bookkeeping for `token list`, so a call does not wait on a write
// (and a cold start's first call not on the WAL's creation) for it.
// Readers of the column flush it first (ListTokens), so what a request
// did is seen by the next read in this process.
type tokenTouches struct {
	mu      sync.Mutex
	pending map[string]time.Time // token hash → when it was used
	busy    bool                 // a writer goroutine is running
	idle    sync.Cond            // signalled when busy turns false
	closed  bool
}

// touchToken records that a token was just used, at most once a minute.
// The write happens in the background; a failure is logged.
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
	if !t.busy {
		t.busy = true
		go s.writeTouches()
	}
}

// writeTouches writes what is pending, in one transaction per batch,
// until nothing is.
func (s *Store) writeTouches() {
	t := &s.touches
	for {
		t.mu.Lock()
		batch := t.pending
		t.pending = nil
		if len(batch) == 0 {
			t.busy = false
			t.idle.Broadcast()
			t.mu.Unlock()
			return
		}
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
	}
}

// flushTouches waits until every use recorded so far is written.
func (s *Store) flushTouches() {
	t := &s.touches
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.idle.L == nil {
		t.idle.L = &t.mu
	}
	for t.busy {
		t.idle.Wait()
	}
}

// closeTouches writes what is pending and takes no more.
func (s *Store) closeTouches() {
	s.flushTouches()
	s.touches.mu.Lock()
	s.touches.closed = true
	s.touches.mu.Unlock()
}
