package store

import (
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/mattn/go-sqlite3"

	"github.com/helixml/helix-org/domain"
)

// TestUnavailable: which database errors mean "not now" (503, retry) and
// with what reason; constraint errors and the like stay as they are.
func TestUnavailable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  error
		want string // the reason; "" for an error left alone
	}{
		{"SQLITE_FULL", sqlite3.Error{Code: sqlite3.ErrFull}, "the database's disk is full"},
		{"ENOSPC", &os.PathError{Op: "write", Path: "/db-wal", Err: syscall.ENOSPC}, "the database's disk is full"},
		{"PostgreSQL disk_full", &pgconn.PgError{Code: "53100"}, "the database's disk is full"},
		{"PostgreSQL out of memory", &pgconn.PgError{Code: "53200"}, "the database server is out of resources"},
		{"PostgreSQL admin_shutdown", &pgconn.PgError{Code: "57P01"}, "the database server is shutting down"},
		{"PostgreSQL cannot_connect_now", &pgconn.PgError{Code: "57P03"}, "the database server is starting up"},
		{"PostgreSQL connection_failure", &pgconn.PgError{Code: "08006"}, "the connection to the database failed"},
		{"refused", &pgconn.ConnectError{}, "the database cannot be reached"},
		{"a cut connection", fmt.Errorf("read: %w", &net.OpError{Op: "read", Err: syscall.ECONNRESET}), "the connection to the database failed"},
		{"unique violation", &pgconn.PgError{Code: "23505"}, ""},
		{"SQLITE_CONSTRAINT", sqlite3.Error{Code: sqlite3.ErrConstraint}, ""},
		{"anything else", errors.New("syntax error"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := unavailable(fmt.Errorf("commit: %w", tt.err))
			ue, ok := errors.AsType[*domain.UnavailableError](err)
			switch {
			case tt.want == "" && (ok || errors.Is(err, domain.ErrUnavailable)):
				t.Errorf("%v is marked unavailable", err)
			case tt.want != "" && (!ok || ue.Reason != tt.want || !errors.Is(err, domain.ErrUnavailable) || !errors.Is(err, tt.err)):
				t.Errorf("unavailable(%v) = %v, want the reason %q, wrapping the cause", tt.err, err, tt.want)
			}
		})
	}
}
