package store

import (
	"context"
	"database/sql"
	"fmt"

	"gorm.io/gorm"
)

// queryFixed runs q, a query whose text never changes, as a statement
// prepared once per store, on the connection or transaction tx uses.
//
// It runs on a context the SQLite driver cannot cancel: with one that
// can, the driver steps every row on a goroutine of its own, a handoff
// between threads per row that costs more than a row of a full-text
// match. Callers that read many rows watch tx's context between rows
// instead (watchRows).
func (s *Store) queryFixed(tx *gorm.DB, q string, args ...any) (*sql.Rows, error) {
	ctx := context.WithoutCancel(tx.Statement.Context)
	st, err := s.prepared(ctx, q)
	if err != nil {
		return nil, err
	}
	switch pool := tx.Statement.ConnPool.(type) {
	case *sql.DB:
		return st.QueryContext(ctx, args...)
	case *sql.Tx:
		return pool.StmtContext(ctx, st).QueryContext(ctx, args...)
	case *preparedTx:
		return pool.Tx.StmtContext(ctx, st).QueryContext(ctx, args...)
	default:
		return pool.QueryContext(ctx, q, args...)
	}
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
