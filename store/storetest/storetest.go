// Package storetest opens a real SQLite store in a test's temp dir.
package storetest

import (
	"testing"

	"github.com/helixml/helix-org/store"
)

// New opens a fresh store file under t.TempDir and closes it at cleanup.
func New(t testing.TB) *store.Store {
	t.Helper()
	st, err := store.Open(t.Context(), t.TempDir()+"/helix-org.db", store.Options{Synchronous: "NORMAL"})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}
