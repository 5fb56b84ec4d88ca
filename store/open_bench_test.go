package store_test

import (
	"path/filepath"
	"testing"

	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
	"github.com/helixml/helix-org/tools"
)

// BenchmarkOpenFresh is the first start of `helix-org serve --init`: a
// new database file created and migrated to the current schema.
func BenchmarkOpenFresh(b *testing.B) {
	for b.Loop() {
		b.StopTimer()
		path := filepath.Join(b.TempDir(), "helix-org.db")
		b.StartTimer()
		st, err := store.Open(b.Context(), path, store.Options{Synchronous: "NORMAL"})
		if err != nil {
			b.Fatal(err)
		}
		st.Close()
	}
}

// BenchmarkBootstrap creates the owner with a grant of every tool, as the
// first `helix-org serve --bootstrap` does, on a migrated database.
func BenchmarkBootstrap(b *testing.B) {
	names := tools.Names()
	for b.Loop() {
		b.StopTimer()
		st := storetest.New(b)
		b.StartTimer()
		if _, err := st.Bootstrap(b.Context(), names); err != nil {
			b.Fatal(err)
		}
	}
}
