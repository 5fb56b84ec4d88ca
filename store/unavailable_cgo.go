//go:build cgo

package store

import (
	"errors"

	"github.com/mattn/go-sqlite3"
)

// sqliteFull reports SQLITE_FULL. The driver's error type exists only in
// cgo builds; the static build (CGO_ENABLED=0, for images FROM scratch)
// cannot open SQLite at all, so it never sees one.
func sqliteFull(err error) bool {
	se, ok := errors.AsType[sqlite3.Error](err)
	return ok && se.Code == sqlite3.ErrFull
}
