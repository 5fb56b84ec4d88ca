package store

import (
	"context"
	"database/sql"
	"fmt"

	"gorm.io/gorm"
)

// maxIdleConns keeps enough pooled connections open for a burst of
// concurrent readers: database/sql's default of two closes and reopens
// SQLite connections (pragmas and all) under load, and with them the
// statements prepared on them.
const maxIdleConns = 32

// sqliteConns bounds SQLite's connections, open and idle: each holds a
// page cache of up to cacheSizeKiB and the statements prepared on it, all
// in C memory the Go heap does not show, so the pool's size is what bounds
// the process's resident memory under load. WAL readers run side by side;
// more of them than this adds no throughput on the cores a server has, and
// a read past it waits for a connection.
const sqliteConns = 16

// cacheSizeKiB is SQLite's page cache per connection (cache_size, in the
// DSN). Pages beyond it are read from the OS's file cache.
const cacheSizeKiB = 2048

// maxPrepared bounds the statements kept prepared: queries whose IN lists
// vary have a text per length. Past it, a query is prepared per call, as
// before.
const maxPrepared = 512

// keptIdle is how many SQLite connections ReleaseMemory keeps open.
const keptIdle = 2

// ReleaseMemory closes the pooled SQLite connections nobody is using but
// keptIdle, and with them their page caches and prepared statements (C
// memory): serve calls it when no request has come for a while, so a
// burst that opened many leaves none behind. The next burst opens them
// again, each once. On PostgreSQL it does nothing.
func (s *Store) ReleaseMemory() {
	sqlDB, err := s.db.DB()
	if err != nil || s.dia.name() != "sqlite" {
		return
	}
	sqlDB.SetMaxIdleConns(keptIdle)
	sqlDB.SetMaxIdleConns(sqliteConns)
}

// tunePool sizes the connection pool and returns the handle reads go
// through. On SQLite each read's text is prepared once per connection
// (preparedReads) instead of on every call, where parsing and planning
// cost as much as running a point lookup. Writes stay on the plain
// handle. PostgreSQL's driver caches its statements itself.
func (s *Store) tunePool() (*gorm.DB, error) {
	sqlDB, err := s.db.DB()
	if err != nil {
		return nil, fmt.Errorf("connection pool: %w", err)
	}
	sqlDB.SetMaxIdleConns(maxIdleConns)
	if s.dia.name() != "sqlite" {
		return s.db, nil
	}
	sqlDB.SetMaxOpenConns(sqliteConns)
	sqlDB.SetMaxIdleConns(sqliteConns)
	// A context makes the session's statement its own, so setting its
	// pool leaves s.db's alone.
	reads := s.db.Session(&gorm.Session{NewDB: true, Context: context.Background()})
	reads.Statement.ConnPool = preparedReads{DB: sqlDB, s: s}
	return reads, nil
}

// preparedReads is the connection pool of SQLite reads: a query runs as
// the statement prepared.go keeps for its text, on a context SQLite's
// driver cannot cancel — with one that can, it steps every row on a
// goroutine of its own, and database/sql watches it with another, which
// costs more than a point lookup. A read whose context is already done
// fails before it starts; one under way finishes its statement. The
// reads that can run long (insight search) use queryFixed, which watches
// the context between rows. Transactions begun on it are plain
// database/sql ones.
type preparedReads struct {
	*sql.DB
	s *Store
}

func (p preparedReads) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ctx = context.WithoutCancel(ctx)
	st, ok, err := p.s.preparedIfRoom(ctx, q)
	if err != nil || !ok {
		return p.DB.QueryContext(ctx, q, args...)
	}
	return st.QueryContext(ctx, args...)
}

func (p preparedReads) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	if ctx.Err() != nil {
		return p.DB.QueryRowContext(ctx, q, args...) // fails with ctx's error
	}
	ctx = context.WithoutCancel(ctx)
	st, ok, err := p.s.preparedIfRoom(ctx, q)
	if err != nil || !ok {
		return p.DB.QueryRowContext(ctx, q, args...)
	}
	return st.QueryRowContext(ctx, args...)
}

// GetDBConn lets GORM's DB() find the pool underneath.
func (p preparedReads) GetDBConn() (*sql.DB, error) { return p.DB, nil }
