package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"

	"gorm.io/driver/postgres"
	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

// postgresDialect is the store on a PostgreSQL database (pgx through
// GORM's driver). Write transactions take one transaction-level advisory
// lock first, so that every server on the database writes in turn, as
// SQLite's one writer does; insights are indexed as a tsvector and ranked
// by BM25 in Go, like the SQLite path.
// Each write also notifies the other servers of its commit
// (notify_postgres.go), as node.
type postgresDialect struct{ url, node string }

func (postgresDialect) name() string { return "postgres" }

func openPostgres(url string) gorm.Dialector {
	return postgres.New(postgres.Config{DSN: url})
}

// idleConnections is how many connections a server keeps open between
// queries. database/sql keeps 2, so a busy server would connect anew —
// a backend forked, a login — for most of its queries.
const idleConnections = 32

func keepConnections(gdb *gorm.DB) error {
	sqlDB, err := gdb.DB()
	if err != nil {
		return err
	}
	sqlDB.SetMaxIdleConns(idleConnections)
	return nil
}

// writeLockKey is the advisory lock every write transaction holds: an
// arbitrary constant, the same in every helix-org process.
const writeLockKey = 0x68656c6978 // "helix"

// jsonText and jsonHas read bodies through helix_jsonb (migrate.go), so
// one that is not JSON matches nothing rather than failing the statement.
func (postgresDialect) jsonText(col string, keys ...string) string {
	expr := "helix_jsonb(" + col + ")"
	for i, k := range keys {
		op := " -> "
		if i == len(keys)-1 {
			op = " ->> "
		}
		expr += op + "'" + k + "'"
	}
	return "(" + expr + ")"
}

// jsonHas relies on jsonb containment, where an array contains each of its
// elements and a string contains itself.
func (postgresDialect) jsonHas(col, key string) string {
	return "COALESCE((helix_jsonb(" + col + ") -> '" + key + "') @> to_jsonb(CAST(? AS text)), false)"
}

// keySep is the unit separator: PostgreSQL's text cannot hold SQLite's NUL.
func (postgresDialect) keySep() string { return "\x1f" }

func (d postgresDialect) beginWrite(tx *gorm.DB) error {
	return tx.Exec("SELECT pg_advisory_xact_lock(?), pg_notify(?, ?)", writeLockKey, changesChannel, d.node).Error
}

func (postgresDialect) deferForeignKeys(tx *gorm.DB) error {
	return tx.Exec("SET CONSTRAINTS ALL DEFERRED").Error
}

// afterMigrate makes every foreign key deferrable (GORM creates them
// immediate and not deferrable), so that an import can defer them to its
// commit as SQLite's defer_foreign_keys does. They stay checked at once
// in every other transaction.
func (postgresDialect) afterMigrate(tx *gorm.DB) error {
	return tx.Exec(`DO $$
DECLARE r record;
BEGIN
	FOR r IN SELECT conrelid::regclass AS tbl, conname FROM pg_constraint
		WHERE contype = 'f' AND NOT condeferrable AND connamespace = current_schema()::regnamespace
	LOOP
		EXECUTE format('ALTER TABLE %s ALTER CONSTRAINT %I DEFERRABLE INITIALLY IMMEDIATE', r.tbl, r.conname);
	END LOOP;
END $$`).Error
}

// createEpochTrigger fires once per statement: a bulk change moves the
// epoch once. The epoch's row stays locked until the change commits, so
// changes to the tables of one epoch take turns.
func (postgresDialect) createEpochTrigger(tx *gorm.DB, name string, t epochTable) error {
	err := tx.Exec(`CREATE OR REPLACE FUNCTION bump_cache_epoch() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	UPDATE cache_epochs SET n = n + 1 WHERE name = TG_ARGV[0];
	RETURN NULL;
END $$`).Error
	if err != nil {
		return err
	}
	events := "DELETE OR UPDATE"
	if len(t.columns) > 0 {
		events += " OF " + strings.Join(t.columns, ", ")
	}
	if !t.noInsert {
		events += " OR INSERT"
	}
	trigger := "epoch_" + name + "_" + t.table
	return tx.Exec("CREATE OR REPLACE TRIGGER " + trigger + " AFTER " + events + " ON " + t.table +
		" FOR EACH STATEMENT EXECUTE FUNCTION bump_cache_epoch('" + name + "')").Error
}

// createInsightIndex keeps each insight's three fields in one tsvector,
// weighted A (trigger), B (resolution) and C (tags) so the field of each
// hit can be told, and their lengths in tokens as SQLite's tokenizer
// counts them, for BM25.
func (postgresDialect) createInsightIndex(tx *gorm.DB) error {
	return tx.Exec(`CREATE TABLE IF NOT EXISTS insight_fts (
	docid bigint PRIMARY KEY,
	len_trigger integer NOT NULL,
	len_resolution integer NOT NULL,
	len_tags integer NOT NULL,
	tsv tsvector NOT NULL
);
CREATE INDEX IF NOT EXISTS insight_fts_tsv ON insight_fts USING gin (tsv)`).Error
}

func (postgresDialect) indexInsight(tx *gorm.DB, row insightRow) error {
	return tx.Exec(`INSERT INTO insight_fts (docid, len_trigger, len_resolution, len_tags, tsv) VALUES (?, ?, ?, ?,
		setweight(to_tsvector('english', ?), 'A') || setweight(to_tsvector('english', ?), 'B') || setweight(to_tsvector('english', ?), 'C'))`,
		row.Doc, tokenCount(row.Trigger), tokenCount(row.Resolution), tokenCount(row.Tags), row.Trigger, row.Resolution, row.Tags).Error
}

func (postgresDialect) unindexInsight(tx *gorm.DB, id string) error {
	return tx.Exec("DELETE FROM insight_fts WHERE docid = (SELECT doc FROM insights WHERE id = ?)", id).Error
}

// insightFields is how many fields the index holds: trigger, resolution, tags.
const insightFields = 3

func (postgresDialect) searchInsights(tx *gorm.DB, terms []string, seat *domain.InsightSeat) ([]domain.Candidate, error) {
	lexemes, err := stems(tx, terms)
	if err != nil {
		return nil, fmt.Errorf("search insights: %w", err)
	}
	var query []string
	for _, l := range lexemes {
		if l != "" {
			query = append(query, quoteLexeme(l))
		}
	}
	if len(query) == 0 {
		return nil, nil
	}
	corpus := domain.CorpusStats{AvgLen: make([]float64, insightFields), DF: make([][]int, len(terms))}
	for t := range corpus.DF {
		corpus.DF[t] = make([]int, insightFields)
	}
	var sums [insightFields]int64
	err = tx.Raw("SELECT count(*), COALESCE(sum(len_trigger), 0), COALESCE(sum(len_resolution), 0), COALESCE(sum(len_tags), 0) FROM insight_fts").
		Row().Scan(&corpus.Docs, &sums[0], &sums[1], &sums[2])
	if err != nil {
		return nil, fmt.Errorf("search insights: %w", err)
	}
	// FTS4's matchinfo gives the mean length as a whole number of tokens,
	// rounded half up; so does this, for the same scores.
	if docs := int64(corpus.Docs); docs > 0 {
		for f, sum := range sums {
			corpus.AvgLen[f] = float64((sum + docs/2) / docs)
		}
	}
	visible, args := "i.superseded_by = '' AND NOT i.retired", []any{}
	if seat != nil {
		cond, more := seatCondition(seat)
		visible += " AND " + cond
		args = more
	}
	// Every match is read, seen or not: the document frequencies count
	// the whole index, as FTS4's matchinfo does.
	args = append(args, strings.Join(query, " | "))
	rows, err := tx.Raw(`SELECT i.id, i.scope, i.target, i.helped, i.failed, i.credit_helped, i.credit_failed, i.last_used, i.created_at,
		f.len_trigger, f.len_resolution, f.len_tags, f.tsv::text, (`+visible+`), i.label
		FROM insight_fts f JOIN insights i ON i.doc = f.docid
		WHERE f.tsv @@ CAST(? AS tsquery)`, args...).Rows()
	if err != nil {
		return nil, fmt.Errorf("search insights: %w", err)
	}
	defer rows.Close()
	var seen []domain.Candidate
	var hits []domain.FieldHits
	for rows.Next() {
		c, h, ok, err := scanMatch(rows, lexemes, seat)
		if err != nil {
			return nil, fmt.Errorf("search insights: %w", err)
		}
		for t := range h.TF {
			for f, n := range h.TF[t] {
				if n > 0 {
					corpus.DF[t][f]++
				}
			}
		}
		if ok {
			seen, hits = append(seen, c), append(hits, h)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search insights: %w", err)
	}
	for i := range seen {
		seen[i].BM25 = domain.BM25(corpus, hits[i])
	}
	return seen, nil
}

// stems returns each term as the index stores it ("" for a stop word).
func stems(tx *gorm.DB, terms []string) ([]string, error) {
	cols := make([]string, len(terms))
	args := make([]any, len(terms))
	for i, t := range terms {
		cols[i], args[i] = "array_to_string(tsvector_to_array(to_tsvector('english', CAST(? AS text))), ' ')", t
	}
	out := make([]string, len(terms))
	dest := make([]any, len(terms))
	for i := range out {
		dest[i] = &out[i]
	}
	if err := tx.Raw("SELECT "+strings.Join(cols, ", "), args...).Row().Scan(dest...); err != nil {
		return nil, err
	}
	for i, l := range out {
		out[i], _, _ = strings.Cut(l, " ")
	}
	return out, nil
}

func quoteLexeme(l string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(l) + "'"
}

// scanMatch reads one matching row: the candidate, its hits per term and
// field, and whether the seat sees it.
func scanMatch(rows *sql.Rows, lexemes []string, seat *domain.InsightSeat) (domain.Candidate, domain.FieldHits, bool, error) {
	var (
		in       domain.Insight
		scope    string
		lastUsed sql.NullTime
		tsv      string
		visible  bool
		label    string
	)
	h := domain.FieldHits{Len: make([]int, insightFields), TF: make([][]int, len(lexemes))}
	st := &in.Stats
	if err := rows.Scan(&in.ID, &scope, &in.Target, &st.Helped, &st.Failed, &st.CreditHelped, &st.CreditFailed, &lastUsed, &in.CreatedAt,
		&h.Len[0], &h.Len[1], &h.Len[2], &tsv, &visible, &label); err != nil {
		return domain.Candidate{}, h, false, err
	}
	visible = visible && readableBy(seat, label)
	in.Scope, in.Label = domain.InsightScope(scope), storedLabel(label)
	if lastUsed.Valid {
		st.LastUsed = lastUsed.Time.UTC()
	}
	in.CreatedAt = in.CreatedAt.UTC()
	positions, err := parseTSVector(tsv)
	if err != nil {
		return domain.Candidate{}, h, false, err
	}
	for t, l := range lexemes {
		h.TF[t] = make([]int, insightFields)
		for _, w := range positions[l] {
			if f := int(w - 'A'); f >= 0 && f < insightFields {
				h.TF[t][f]++
			}
		}
	}
	return domain.Candidate{Insight: in}, h, visible, nil
}

// parseTSVector reads a tsvector's text form ('lexeme':1A,4B 'other':2C)
// into the weight of each position of each lexeme; a position without a
// weight has weight D.
func parseTSVector(s string) (map[string][]byte, error) {
	out := map[string][]byte{}
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		if s[0] != '\'' {
			return nil, fmt.Errorf("tsvector: want a quoted lexeme at %q", s)
		}
		var lex strings.Builder
		i := 1
		for ; i < len(s); i++ {
			c := s[i]
			if c == '\\' && i+1 < len(s) {
				i++
				lex.WriteByte(s[i])
				continue
			}
			if c == '\'' {
				if i+1 < len(s) && s[i+1] == '\'' {
					i++
					lex.WriteByte('\'')
					continue
				}
				break
			}
			lex.WriteByte(c)
		}
		if i >= len(s) {
			return nil, errors.New("tsvector: unterminated lexeme")
		}
		s = s[i+1:]
		var weights []byte
		if strings.HasPrefix(s, ":") {
			list, rest, _ := strings.Cut(s[1:], " ")
			s = rest
			for _, p := range strings.Split(list, ",") {
				w := byte('D')
				if n := len(p); n > 0 && p[n-1] >= 'A' && p[n-1] <= 'D' {
					w, p = p[n-1], p[:n-1]
				}
				if _, err := strconv.Atoi(p); err != nil {
					return nil, fmt.Errorf("tsvector: position %q: %w", p, err)
				}
				weights = append(weights, w)
			}
		}
		out[lex.String()] = weights
	}
	return out, nil
}

// tokenCount is a text's length in tokens as SQLite's FTS tokenizer counts
// them: runs of ASCII letters and digits, and of non-ASCII characters.
func tokenCount(text string) int {
	n, in := 0, false
	for i := 0; i < len(text); i++ {
		c := text[i]
		tok := c >= 0x80 || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if tok && !in {
			n++
		}
		in = tok
	}
	return n
}

// backup runs pg_dump (custom format, for pg_restore), which reads one
// snapshot while the servers go on writing.
func (d postgresDialect) backup(ctx context.Context, _ *gorm.DB, path string) error {
	out, err := exec.CommandContext(ctx, "pg_dump", "--format=custom", "--file="+path, "--dbname="+d.url).CombinedOutput()
	if err != nil {
		return fmt.Errorf("pg_dump: %w: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

func (postgresDialect) settings(ctx context.Context, db *gorm.DB) (map[string]string, error) {
	out := map[string]string{}
	for _, p := range []string{"server_version", "synchronous_commit", "fsync", "default_transaction_isolation"} {
		var v string
		if err := db.WithContext(ctx).Raw("SHOW " + p).Scan(&v).Error; err != nil {
			return nil, fmt.Errorf("show %s: %w", p, err)
		}
		out[p] = v
	}
	return out, nil
}

// eventPageSQL is none: pgx reads rows cheaply, and json_agg costs the
// server more than it saves (BenchmarkReadEvents).
func (postgresDialect) eventPageSQL(string) string { return "" }
