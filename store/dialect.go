package store

import (
	"context"
	"strings"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

// dialect is the SQL that differs between the two databases the store runs
// on: SQLite (dialect_sqlite.go, the default) and PostgreSQL
// (dialect_postgres.go). Everything else in the store is portable GORM, and
// nothing above the store knows which one it has.
type dialect interface {
	// name is "sqlite" or "postgres".
	name() string
	// jsonText is an expression for the text at keys inside the JSON
	// document in col ("body", "extra", "actor" → body.extra.actor).
	jsonText(col string, keys ...string) string
	// jsonHas is a condition with one placeholder: the JSON value at key
	// in col is that string or an array holding it.
	jsonHas(col, key string) string
	// keySep joins a stream's id and a key into one dedup key.
	keySep() string
	// beginWrite runs first in every write transaction: it makes writes
	// from every process on the database take turns, as one SQLite
	// writer does.
	beginWrite(tx *gorm.DB) error
	// deferForeignKeys postpones the foreign-key checks of tx to its commit.
	deferForeignKeys(tx *gorm.DB) error
	// afterMigrate runs after the migrations, on every open.
	afterMigrate(tx *gorm.DB) error
	// createInsightIndex creates the full-text index of insights (migration 19).
	createInsightIndex(tx *gorm.DB) error
	// indexInsight adds a current insight's text to the full-text index.
	indexInsight(tx *gorm.DB, row insightRow) error
	// unindexInsight removes insight id's text from the full-text index.
	unindexInsight(tx *gorm.DB, id string) error
	// searchInsights scores every indexed insight matching any of terms by
	// BM25 and returns those seat sees (all, when nil).
	searchInsights(tx *gorm.DB, terms []string, seat *domain.InsightSeat) ([]domain.Candidate, error)
	// backup writes a consistent copy of the database to path, which
	// exists, empty and owner-only.
	backup(ctx context.Context, db *gorm.DB, path string) error
	// eventPageSQL wraps a query for events' columns (readEventsSQL) so
	// that it returns one row: the highest seq of all events
	// (lastSeqSQL, for eventPages) and the events as one JSON array of
	// domain.Event objects, createdAt as stored, "[]" when none. Empty
	// means the store reads the rows themselves.
	eventPageSQL(query string) string
	// createEpochTrigger makes changes to t move epoch name (epochs.go).
	createEpochTrigger(tx *gorm.DB, name string, t epochTable) error
	// settings are the connection settings in force (Pragmas).
	settings(ctx context.Context, db *gorm.DB) (map[string]string, error)
}

// IsPostgres reports whether a --db value names a PostgreSQL database
// (a postgres:// or postgresql:// URL) rather than a SQLite file.
func IsPostgres(db string) bool {
	return strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://")
}

// dialectOf is the dialect of tx's database, for the migrations, which
// run without the store.
func dialectOf(tx *gorm.DB) dialect {
	if tx.Dialector.Name() == "postgres" {
		return postgresDialect{}
	}
	return sqliteDialect{}
}

// Dialect is the database the store runs on: "sqlite" or "postgres".
func (s *Store) Dialect() string { return s.dia.name() }

// seatCondition is the SQL condition (with its arguments) on the insight
// columns of alias i that keeps what seat sees.
func seatCondition(seat *domain.InsightSeat) (string, []any) {
	return `(i.scope = 'org' OR (i.scope = 'role' AND i.target = ?) OR (i.scope = 'position' AND i.target = ?) OR (i.scope = 'worker' AND i.target = ?))`,
		[]any{seat.Role, seat.Position, seat.Worker}
}
