package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

// HoldWrites takes the write lock as a committing batch would, so a test
// can queue writes behind it; release lets them commit as one batch.
func (s *Store) HoldWrites() (release func()) {
	s.writeLock <- struct{}{}
	return func() { <-s.writeLock }
}

// PoolStats are the database pool's counters.
func (s *Store) PoolStats() sql.DBStats {
	db, _ := s.db.DB()
	return db.Stats()
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
// sees, with its counters, in one join), ranked together, with every
// match's cosine when hybrid. Tests hold Recall to it.
func (s *Store) RecallReference(ctx context.Context, reader, query string, mode domain.RankMode, hybrid bool, limit int) ([]domain.Ranked, error) {
	tx := s.read(ctx)
	seat, err := insightSeat(tx, reader)
	if err != nil {
		return nil, err
	}
	cands, err := s.dia.searchInsights(tx, domain.Terms(query), &seat)
	if err != nil {
		return nil, err
	}
	if hybrid && len(cands) > 0 {
		if err := s.semantics(tx, s.hybridQuery(ctx, query), cands); err != nil {
			return nil, err
		}
	}
	return domain.Rank(mode, cands, s.Now(), limit), nil
}

// FillStream puts n events on stream in one statement, without the checks,
// triggers and fsyncs of Append: a benchmark's history in seconds rather
// than n appends. Their bodies are "event 1" … "event n", oldest first.
func (s *Store) FillStream(ctx context.Context, stream string, n int) error {
	series := "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ?) "
	from := "c"
	if s.dia.name() == "postgres" {
		series, from = "", "generate_series(1, ?) AS c(x)"
	}
	q := "INSERT INTO events (id, stream_id, source, source_kind, caused_by, depth, created_at, body) " + series +
		"SELECT 'e-fill-' || CAST(? AS text) || '-' || x, CAST(? AS text), '', 'system', '', 0, ?, " +
		`'{"body":"event ' || x || '"}' FROM ` + from
	args := []any{n, stream, stream, s.Now()}
	if s.dia.name() == "postgres" {
		args = []any{stream, stream, s.Now(), n}
	}
	return s.db.WithContext(ctx).Exec(q, args...).Error
}

// Analyze refreshes the planner's statistics, as PostgreSQL's autovacuum
// does after a bulk insert; SQLite keeps none unless asked, nor does the
// store ask.
func (s *Store) Analyze(ctx context.Context) error {
	if s.dia.name() != "postgres" {
		return nil
	}
	return s.db.WithContext(ctx).Exec("ANALYZE events").Error
}

// ExplainReadEvents is the database's plan for ReadEvents on one stream,
// one line per step.
func (s *Store) ExplainReadEvents(ctx context.Context, stream string, since int64, limit int) (string, error) {
	explain := "EXPLAIN QUERY PLAN "
	if s.dia.name() == "postgres" {
		explain = "EXPLAIN "
	}
	rows, err := s.db.WithContext(ctx).Raw(explain+readEventsSQL, []string{stream}, since, limit).Rows()
	if err != nil {
		return "", err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return "", err
	}
	var plan []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return "", err
		}
		plan = append(plan, fmt.Sprint(vals[len(vals)-1]))
	}
	return strings.Join(plan, "\n"), rows.Err()
}

// AuthEpoch reads the epoch the auth cache is kept at.
func (s *Store) AuthEpoch(ctx context.Context) (int64, error) { return s.epoch(ctx, epochAuth) }

// NumberedPlaceholders is a fixed query's text as PostgreSQL gets it.
var NumberedPlaceholders = numberedPlaceholders

// MigrateLabels runs the labels migration again, as on a database that
// recorded taint before labels.
func (s *Store) MigrateLabels(ctx context.Context) error {
	return s.write(ctx, migrateLabels)
}

// ForgetEmbeddings clears every insight's vector, as a database from
// before the embeddings had them, and MigrateEmbeddings runs their
// migration again.
func (s *Store) ForgetEmbeddings(ctx context.Context) error {
	return s.db.WithContext(ctx).Exec("UPDATE insights SET embedding = NULL, embedding_model = ''").Error
}

func (s *Store) MigrateEmbeddings(ctx context.Context) error {
	return s.write(ctx, migrateEmbeddings)
}

// SetMaxIDParams makes hybrid recall load vectors in chunks of n ids, so
// a test sees the chunking without 65,536 matches; it returns the undo.
func SetMaxIDParams(n int) func() {
	old := maxIDParams
	maxIDParams = n
	return func() { maxIDParams = old }
}

// SeedCredit gives the insights ids n runs that cited them all, as
// ledger rows a millisecond apart from now (run i helped when helped(i)
// says so), and folds them once: the history of long-cited advice
// without n runs.
func (s *Store) SeedCredit(ctx context.Context, ids []string, n int, helped func(i int) bool) error {
	return s.write(ctx, func(tx *gorm.DB) error {
		rows := make([]insightCreditRow, 0, n*len(ids))
		at := s.Now()
		for i := range n {
			o := domain.OutcomeFailed
			if helped(i) {
				o = domain.OutcomeHelped
			}
			for _, id := range ids {
				rows = append(rows, insightCreditRow{Source: fmt.Sprintf("%sseed-%d", domain.PrefixActivation, i), InsightID: id, Cited: id,
					Outcome: string(o), Weight: 1, Count: 1, At: at.Add(time.Duration(i) * time.Millisecond)})
			}
		}
		if err := tx.CreateInBatches(rows, 500).Error; err != nil {
			return err
		}
		return restatTx(tx, ids...)
	})
}

// FoldWhole is id's ledger folded from its first row, as the fold did
// before checkpoints, without writing anything; settled says whether
// the insight has a checkpoint.
func (s *Store) FoldWhole(ctx context.Context, id string) (whole domain.InsightStats, settled bool, err error) {
	tx := s.read(ctx)
	cps, err := checkpointsTx(tx, []string{id})
	if err != nil {
		return whole, false, err
	}
	t, err := tailsTx(tx, []creditCheckpointRow{{InsightID: id}})
	return t.fold(creditCheckpointRow{InsightID: id}).end, cps[0].Through > 0, err
}

// HoldConns takes n of the database pool's connections and keeps them
// until release, so a test can see what the next read does with none free.
func (s *Store) HoldConns(ctx context.Context, n int) (release func(), err error) {
	db, err := s.db.DB()
	if err != nil {
		return nil, err
	}
	var held []*sql.Conn
	release = func() {
		for _, c := range held {
			c.Close()
		}
	}
	for range n {
		c, err := db.Conn(ctx)
		if err != nil {
			release()
			return nil, err
		}
		held = append(held, c)
	}
	return release, nil
}

// RecordMigrated makes Open, given the returned context, record every row
// type its migration steps bring to their struct; models lists them.
func RecordMigrated(ctx context.Context) (context.Context, func() []any) {
	done := migratedSet{}
	return context.WithValue(ctx, migratedKey{}, done), func() []any {
		out := make([]any, 0, len(done))
		for _, m := range done {
			out = append(out, m)
		}
		return out
	}
}

// AutoMigrate runs GORM's AutoMigrate of models on the store's database,
// outside any migration step.
func (s *Store) AutoMigrate(ctx context.Context, models ...any) error {
	return s.db.WithContext(ctx).AutoMigrate(models...)
}
