package store

import (
	"context"

	"gorm.io/gorm"
)

// HoldWrites takes the write lock as a committing batch would, so a test
// can queue writes behind it; release lets them commit as one batch.
func (s *Store) HoldWrites() (release func()) {
	s.writeLock <- struct{}{}
	return func() { <-s.writeLock }
}

// QueuedWrites counts the writes waiting for the next batch.
func (s *Store) QueuedWrites() int {
	s.queue.mu.Lock()
	defer s.queue.mu.Unlock()
	return len(s.queue.reqs)
}

// Write is the store's write path, for writes no method makes: one that
// fails after changing rows, one that panics.
func (s *Store) Write(ctx context.Context, fn func(tx *gorm.DB) error) error {
	return s.write(ctx, fn)
}
