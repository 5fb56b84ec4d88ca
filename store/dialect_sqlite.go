package store

import (
	"context"
	"fmt"
	"strings"

	"gorm.io/driver/sqlite"
	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

// sqliteDialect is the store on one SQLite file: one writer at a time
// (_txlock=immediate and the store's write lock), FTS4 for insights,
// VACUUM INTO for backups.
type sqliteDialect struct{}

func (sqliteDialect) name() string { return "sqlite" }

func openSQLite(path, sync string) (gorm.Dialector, error) {
	if err := createPrivate(path); err != nil {
		return nil, err
	}
	return sqlite.Open(dsn(path, sync)), nil
}

// jsonText and jsonHas read only bodies SQLite can parse: its JSON
// functions fail the whole statement on one they cannot (damaged, or
// nested past 1,000 levels), and that must not break a page. SQLite keeps
// the parse of json_valid for the function that follows.
func (sqliteDialect) jsonText(col string, keys ...string) string {
	return "json_extract(" + validJSON(col) + ", '$." + strings.Join(keys, ".") + "')"
}

func (sqliteDialect) jsonHas(col, key string) string {
	return "EXISTS (SELECT 1 FROM json_each(" + validJSON(col) + ", '$." + key + "') WHERE json_each.value = ?)"
}

// validJSON is col when it holds JSON SQLite reads, else NULL.
func validJSON(col string) string { return "CASE WHEN json_valid(" + col + ") THEN " + col + " END" }

func (sqliteDialect) keySep() string { return "\x00" }

// beginWrite has nothing to do: every transaction takes SQLite's write
// lock when it begins (_txlock=immediate).
func (sqliteDialect) beginWrite(*gorm.DB) error { return nil }

func (sqliteDialect) deferForeignKeys(tx *gorm.DB) error {
	return tx.Exec("PRAGMA defer_foreign_keys = ON").Error
}

func (sqliteDialect) afterMigrate(*gorm.DB) error { return nil }

// createEpochTrigger: SQLite triggers fire per row; a bulk change moves
// the epoch by more than one, which is all the same to its readers.
func (sqliteDialect) createEpochTrigger(tx *gorm.DB, name string, t epochTable) error {
	bump := " ON " + t.table + " BEGIN UPDATE cache_epochs SET n = n + 1 WHERE name = '" + name + "'; END"
	update := "UPDATE"
	if len(t.columns) > 0 {
		update += " OF " + strings.Join(t.columns, ", ")
	}
	events := []string{"DELETE", update}
	if !t.noInsert {
		events = append(events, "INSERT")
	}
	for _, ev := range events {
		trigger := "epoch_" + name + "_" + t.table + "_" + strings.ToLower(strings.Fields(ev)[0])
		if err := tx.Exec("CREATE TRIGGER IF NOT EXISTS " + trigger + " AFTER " + ev + bump).Error; err != nil {
			return err
		}
	}
	return nil
}

// createInsightIndex uses FTS4 rather than FTS5: mattn/go-sqlite3 compiles
// FTS5 only under a build tag, FTS4 always; matchinfo gives the counts
// BM25 needs, which domain.BM25 computes.
func (sqliteDialect) createInsightIndex(tx *gorm.DB) error {
	return tx.Exec("CREATE VIRTUAL TABLE IF NOT EXISTS insight_fts USING fts4(trigger, resolution, tags, tokenize=porter)").Error
}

func (sqliteDialect) indexInsight(tx *gorm.DB, row insightRow) error {
	return tx.Exec("INSERT INTO insight_fts (docid, trigger, resolution, tags) VALUES (?, ?, ?, ?)", row.Doc, row.Trigger, row.Resolution, row.Tags).Error
}

func (sqliteDialect) unindexInsight(tx *gorm.DB, id string) error {
	return tx.Exec("DELETE FROM insight_fts WHERE docid = (SELECT doc FROM insights WHERE id = ?)", id).Error
}

func (sqliteDialect) searchInsights(tx *gorm.DB, terms []string, seat *domain.InsightSeat) ([]domain.Candidate, error) {
	match := `"` + strings.Join(terms, `" OR "`) + `"`
	// CROSS JOIN keeps the full-text table outermost: the other order runs
	// the whole MATCH once per insight row.
	q := `SELECT i.id, i.scope, i.target, i.helped, i.failed, i.credit_helped, i.credit_failed, i.last_used, i.created_at, i.label, matchinfo(insight_fts, 'pcnalx')
		FROM insight_fts CROSS JOIN insights i ON i.doc = insight_fts.docid
		WHERE insight_fts MATCH ? AND i.superseded_by = '' AND NOT i.retired`
	args := []any{match}
	if seat != nil {
		cond, more := seatCondition(seat)
		q += " AND " + cond
		args = append(args, more...)
	}
	rows, err := tx.Raw(q, args...).Rows()
	if err != nil {
		return nil, fmt.Errorf("search insights: %w", err)
	}
	defer rows.Close()
	var out []domain.Candidate
	var mi matchInfo
	for rows.Next() {
		c, label, err := mi.scan(rows)
		if err != nil {
			return nil, fmt.Errorf("search insights: %w", err)
		}
		if readableBy(seat, label) {
			out = append(out, c)
		}
	}
	return out, rows.Err()
}

// backup uses VACUUM INTO, which reads one snapshot while other
// connections, a running server's included, go on writing.
func (sqliteDialect) backup(ctx context.Context, db *gorm.DB, path string) error {
	return db.WithContext(ctx).Exec("VACUUM INTO ?", path).Error
}

func (sqliteDialect) settings(ctx context.Context, db *gorm.DB) (map[string]string, error) {
	out := map[string]string{}
	for _, p := range []string{"journal_mode", "synchronous", "foreign_keys", "busy_timeout", "cache_size", "mmap_size"} {
		var v string
		if err := db.WithContext(ctx).Raw("PRAGMA " + p).Scan(&v).Error; err != nil {
			return nil, fmt.Errorf("pragma %s: %w", p, err)
		}
		out[p] = v
	}
	return out, nil
}

func (sqliteDialect) eventPageSQL(query string) string {
	return `SELECT (` + lastSeqSQL + `), COALESCE(json_group_array(json_object('seq', seq, 'id', id, 'streamId', stream_id, 'source', source,
	'sourceKind', source_kind, 'causedBy', caused_by, 'depth', depth, 'createdAt', created_at, 'message', json(body),
	'label', CASE label WHEN '' THEN NULL ELSE json(label) END)), '[]') FROM (` + query + `)`
}
