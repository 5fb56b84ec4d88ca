package store

import (
	"context"
	"database/sql"
	"strings"

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
// that can reach the top: every match reader sees, read with its
// counters in one join, ranked together. Tests hold Recall to it.
func (s *Store) RecallReference(ctx context.Context, reader, query string, mode domain.RankMode, limit int) ([]domain.Ranked, error) {
	tx := s.read(ctx)
	seat, err := insightSeat(tx, reader)
	if err != nil {
		return nil, err
	}
	rows, err := tx.Raw(`SELECT i.id, i.helped, i.failed, i.credit_helped, i.credit_failed, i.last_used, i.created_at, matchinfo(insight_fts, 'pcnalx')
		FROM insight_fts CROSS JOIN insights i ON i.doc = insight_fts.docid
		WHERE insight_fts MATCH ? AND i.superseded_by = '' AND NOT i.retired
		AND (i.scope = 'org' OR (i.scope = 'role' AND i.target = ?) OR (i.scope = 'position' AND i.target = ?) OR (i.scope = 'worker' AND i.target = ?))`,
		`"`+strings.Join(domain.Terms(query), `" OR "`)+`"`, seat.Role, seat.Position, seat.Worker).Rows()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var (
		cands []domain.Candidate
		mi    matchInfo
	)
	for rows.Next() {
		var (
			in       domain.Insight
			lastUsed sql.NullTime
		)
		st := &in.Stats
		if err := rows.Scan(&in.ID, &st.Helped, &st.Failed, &st.CreditHelped, &st.CreditFailed, &lastUsed, &in.CreatedAt, &mi.blob); err != nil {
			return nil, err
		}
		if lastUsed.Valid {
			st.LastUsed = lastUsed.Time.UTC()
		}
		in.CreatedAt = in.CreatedAt.UTC()
		if err := mi.decode(); err != nil {
			return nil, err
		}
		cands = append(cands, domain.Candidate{Insight: in, BM25: domain.BM25(mi.corpus, mi.hits)})
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return domain.Rank(mode, cands, s.Now(), limit), nil
}
