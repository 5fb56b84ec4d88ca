package store

import (
	"context"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
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

// RecallReference ranks as recall did before it loaded only the matches
// that can reach the top: the dialect's full search (every match reader
// sees, with its counters, in one join), ranked together. Tests hold
// Recall to it.
func (s *Store) RecallReference(ctx context.Context, reader, query string, mode domain.RankMode, limit int) ([]domain.Ranked, error) {
	tx := s.read(ctx)
	seat, err := insightSeat(tx, reader)
	if err != nil {
		return nil, err
	}
	cands, err := s.dia.searchInsights(tx, domain.Terms(query), &seat)
	if err != nil {
		return nil, err
	}
	return domain.Rank(mode, cands, s.Now(), limit), nil
}
