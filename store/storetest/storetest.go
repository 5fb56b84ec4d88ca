// Package storetest opens a real store for a test: a SQLite file in its
// temp dir, or a database of its own in a throwaway PostgreSQL cluster
// when HELIX_ORG_TEST_DB=postgres (postgres.go).
package storetest

import (
	"database/sql"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/helixml/helix-org/store"
)

// New opens a fresh store file under t.TempDir and closes it at cleanup.
func New(t testing.TB) *store.Store {
	t.Helper()
	return NewWithClock(t, nil)
}

// NewWithClock is New with the store's clock replaced by now (nil means
// the real clock), so tests can move time past an expiry without waiting.
func NewWithClock(t testing.TB, now func() time.Time) *store.Store {
	t.Helper()
	return NewWith(t, store.Options{Now: now})
}

// NewWith opens a fresh store with opts (its Transports, its clock); the
// database and the key file are the test's, and the synchronous pragma is
// NORMAL unless opts names one.
func NewWith(t testing.TB, opts store.Options) *store.Store {
	t.Helper()
	if opts.Synchronous == "" {
		opts.Synchronous = "NORMAL"
	}
	if UsePostgres() && opts.KeyFile == "" {
		opts.KeyFile = t.TempDir() + "/helix-org.key"
	}
	st, err := store.Open(t.Context(), DB(t), opts)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// DB is a fresh, migrated database for t, as store.Open takes it: a copy
// of the template file under t.TempDir (sqlite.go), or a PostgreSQL URL
// under HELIX_ORG_TEST_DB=postgres. A PostgreSQL store needs a key file
// too (store.Options.KeyFile).
func DB(t testing.TB) string {
	t.Helper()
	if UsePostgres() {
		return PostgresURL(t)
	}
	return sqliteCopy(t)
}

// EmptyDB is a database for t that no store has opened: a path under
// t.TempDir, or an empty PostgreSQL database (from template0). Open
// migrates it from the first step, as on a first start.
func EmptyDB(t testing.TB) string {
	t.Helper()
	if UsePostgres() {
		return createDB(t, "template0")
	}
	return filepath.Join(t.TempDir(), "helix-org.db")
}

// Clock is a fake clock that moves only when told to. It is safe for the
// concurrent use a running server makes of it.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock stopped at start.
func NewClock(start time.Time) *Clock { return &Clock{now: start} }

// Now returns the clock's current time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// Exec runs one statement on st's database over a connection of its own,
// as an operator with a SQL shell would: for rows no store method writes,
// such as what an older version stored or damage. Write it in SQL both
// dialects take, without placeholders.
func Exec(t testing.TB, st *store.Store, query string) {
	t.Helper()
	driver, dsn := "sqlite3", "file:"+st.Path()+"?_busy_timeout=10000"
	if UsePostgres() {
		driver, dsn = "pgx", st.Path()
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(t.Context(), query); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}
