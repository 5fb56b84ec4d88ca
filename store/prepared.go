package store

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"gorm.io/gorm"
)

// queryFixed runs q, a query whose text never changes, as a statement
// prepared once per store, on the connection or transaction tx uses. q
// is written with ? placeholders, whatever the dialect (fixedText).
//
// It runs on a context the SQLite driver cannot cancel: with one that
// can, the driver steps every row on a goroutine of its own, a handoff
// between threads per row that costs more than a row of a full-text
// match. Callers that read many rows watch tx's context between rows
// instead (watchRows).
func (s *Store) queryFixed(tx *gorm.DB, q string, args ...any) (*sql.Rows, error) {
	ctx := context.WithoutCancel(tx.Statement.Context)
	st, err := s.stmtOf(ctx, tx, q)
	if err != nil {
		return nil, err
	}
	var rows *sql.Rows
	if st == nil {
		rows, err = tx.Statement.ConnPool.QueryContext(ctx, s.fixedText(q), args...)
	} else {
		rows, err = st.QueryContext(ctx, args...)
	}
	return rows, s.translated(err)
}

// scanFixed scans the first row of queryFixed into dest; found is false
// when there is none.
func (s *Store) scanFixed(tx *gorm.DB, q string, args []any, dest ...any) (found bool, err error) {
	rows, err := s.queryFixed(tx, q, args...)
	if err != nil {
		return false, err
	}
	defer rows.Close()
	if !rows.Next() {
		return false, rows.Err()
	}
	if err := rows.Scan(dest...); err != nil {
		return false, err
	}
	return true, rows.Close()
}

// execFixed is queryFixed for a statement that returns no rows. The hot
// writes (an event, its triggers) use these two rather than GORM, whose
// building of each statement and scanning by reflection cost several
// times SQLite's own work, all of it inside the serial part of a batch
// (groupcommit.go).
func (s *Store) execFixed(tx *gorm.DB, q string, args ...any) (sql.Result, error) {
	ctx := context.WithoutCancel(tx.Statement.Context)
	st, err := s.stmtOf(ctx, tx, q)
	if err != nil {
		return nil, err
	}
	var res sql.Result
	if st == nil {
		res, err = tx.Statement.ConnPool.ExecContext(ctx, s.fixedText(q), args...)
	} else {
		res, err = st.ExecContext(ctx, args...)
	}
	return res, s.translated(err)
}

// translated is err as GORM gives it (TranslateError: ErrDuplicatedKey,
// ErrForeignKeyViolated; unavailable's mark), for a statement run without
// GORM.
func (s *Store) translated(err error) error {
	if t, ok := s.db.Dialector.(gorm.ErrorTranslator); ok && err != nil {
		err = t.Translate(err)
	}
	return unavailable(err)
}

// stmtOf is q's prepared statement on tx's connection or transaction. It
// is nil, and the caller runs the text on tx's pool, past maxPrepared
// statements and for any other pool: the reads' (preparedReads) prepares
// each text itself.
func (s *Store) stmtOf(ctx context.Context, tx *gorm.DB, q string) (*sql.Stmt, error) {
	pool := tx.Statement.ConnPool
	switch pool.(type) {
	case *sql.DB, *sql.Tx, *preparedTx:
	default:
		return nil, nil
	}
	st, ok, err := s.preparedIfRoom(ctx, s.fixedText(q))
	if err != nil || !ok {
		return nil, err
	}
	switch pool := pool.(type) {
	case *sql.Tx:
		return pool.StmtContext(ctx, st), nil
	case *preparedTx:
		return pool.Tx.StmtContext(ctx, st), nil
	}
	return st, nil
}

// fixedText is q, written with ? placeholders, in the dialect's own:
// unchanged on SQLite, $1, $2, … on PostgreSQL, converted once per text.
func (s *Store) fixedText(q string) string {
	if s.dia.name() != "postgres" {
		return q
	}
	if t, ok := s.texts.Load(q); ok {
		return t.(string)
	}
	t := numberedPlaceholders(q)
	s.texts.Store(q, t)
	return t
}

// numberedPlaceholders turns each ? outside a quoted string or name into
// $1, $2, ….
func numberedPlaceholders(q string) string {
	var b strings.Builder
	n := 0
	var quote byte
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '?':
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// inList is "(?, ?, …)" for n values, n > 0.
func inList(n int) string {
	return "(" + strings.Repeat("?, ", n-1) + "?)"
}

// prepared returns q's statement, preparing it on first use.
func (s *Store) prepared(ctx context.Context, q string) (*sql.Stmt, error) {
	if st, ok := s.stmts.Load(q); ok {
		return st.(*sql.Stmt), nil
	}
	db, err := s.db.DB()
	if err != nil {
		return nil, err
	}
	st, err := db.PrepareContext(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("prepare %.40q: %w", q, err)
	}
	if prev, loaded := s.stmts.LoadOrStore(q, st); loaded {
		st.Close()
		return prev.(*sql.Stmt), nil
	}
	s.nstmts.Add(1)
	return st, nil
}

// preparedIfRoom is prepared while fewer than maxPrepared statements are
// kept; past that, ok is false and the caller runs q unprepared.
func (s *Store) preparedIfRoom(ctx context.Context, q string) (st *sql.Stmt, ok bool, err error) {
	if st, ok := s.stmts.Load(q); ok {
		return st.(*sql.Stmt), true, nil
	}
	if s.nstmts.Load() >= maxPrepared {
		return nil, false, nil
	}
	st, err = s.prepared(ctx, q)
	return st, err == nil, err
}

// closeStatements closes the prepared statements, before the database.
func (s *Store) closeStatements() {
	s.stmts.Range(func(q, st any) bool {
		st.(*sql.Stmt).Close()
		s.stmts.Delete(q)
		s.nstmts.Add(-1)
		return true
	})
}

// watchRows says whether the n-th row of a scan may be read: every 256
// rows it checks ctx, which queryFixed's scans do not pass to the driver.
func watchRows(ctx context.Context, n int) error {
	if n%256 == 0 {
		return ctx.Err()
	}
	return nil
}

// begin starts a write transaction. On SQLite, once migrated, its
// statements run as the store's prepared ones bound to the transaction
// (preparedTx): preparing an insert costs SQLite about as much as running
// it, and a write transaction would otherwise prepare every statement it
// runs anew.
func (s *Store) begin(ctx context.Context) *gorm.DB {
	tx := s.db.WithContext(ctx).Begin()
	if tx.Error != nil || !s.prepareWrites.Load() {
		return tx
	}
	if sqlTx, ok := tx.Statement.ConnPool.(*sql.Tx); ok {
		tx.Statement.ConnPool = &preparedTx{Tx: sqlTx, s: s}
	}
	return tx
}

// preparedTx is a write transaction's connection pool: each text is the
// store's prepared statement (prepared.go) bound to the transaction,
// which database/sql prepares once per connection. Past maxPrepared
// texts, a statement is prepared for its one use, as before.
type preparedTx struct {
	*sql.Tx
	s *Store
}

func (p *preparedTx) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	st, ok, err := p.s.preparedIfRoom(context.WithoutCancel(ctx), q)
	if err != nil || !ok {
		return p.Tx.ExecContext(ctx, q, args...)
	}
	return p.Tx.StmtContext(ctx, st).ExecContext(ctx, args...)
}

func (p *preparedTx) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	st, ok, err := p.s.preparedIfRoom(context.WithoutCancel(ctx), q)
	if err != nil || !ok {
		return p.Tx.QueryContext(ctx, q, args...)
	}
	return p.Tx.StmtContext(ctx, st).QueryContext(ctx, args...)
}

func (p *preparedTx) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	st, ok, err := p.s.preparedIfRoom(context.WithoutCancel(ctx), q)
	if err != nil || !ok {
		return p.Tx.QueryRowContext(ctx, q, args...)
	}
	return p.Tx.StmtContext(ctx, st).QueryRowContext(ctx, args...)
}
