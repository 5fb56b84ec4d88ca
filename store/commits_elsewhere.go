package store

import (
	"context"
	"database/sql"
	"sync"
	"sync/atomic"
)

// otherCommits tells a store that another process committed, so what it
// caches (settings_cache.go) is dropped at once, not after a TTL: a
// `helix-org config set` on a running server's database applies to the
// next request.
type otherCommits struct {
	// remote counts commits announced by other servers (PostgreSQL's
	// NOTIFY, notify_postgres.go).
	remote atomic.Uint64
	// On SQLite, PRAGMA data_version on a connection of its own changes
	// whenever any other connection commits, in this process or another.
	mu    sync.Mutex
	conn  *sql.Conn
	fails uint64
}

// commitsElsewhere is a mark that moves whenever a commit was made that
// this store's caches did not see made. On SQLite that includes the
// store's own writes on its other connections, which costs only a
// re-read after each commit.
func (s *Store) commitsElsewhere(ctx context.Context) uint64 {
	o := &s.others
	if s.dia.name() == "postgres" {
		return o.remote.Load()
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	var v uint64
	if o.conn != nil {
		if err := o.conn.QueryRowContext(context.WithoutCancel(ctx), "PRAGMA data_version").Scan(&v); err == nil {
			return v << 1
		}
	}
	// No answer: a mark never seen before, so nothing cached is trusted.
	o.fails++
	return o.fails<<1 | 1
}

// watchOtherCommits takes SQLite's data_version connection.
func (s *Store) watchOtherCommits(ctx context.Context) error {
	if s.dia.name() == "postgres" {
		return nil
	}
	sqlDB, err := s.db.DB()
	if err != nil {
		return err
	}
	conn, err := sqlDB.Conn(ctx)
	if err != nil {
		return err
	}
	s.others.conn = conn
	return nil
}

// closeOtherCommits gives the data_version connection back.
func (s *Store) closeOtherCommits() {
	s.others.mu.Lock()
	defer s.others.mu.Unlock()
	if s.others.conn != nil {
		s.others.conn.Close()
		s.others.conn = nil
	}
}
