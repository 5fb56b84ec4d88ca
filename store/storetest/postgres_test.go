package storetest_test

import (
	"testing"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

// TestPostgresCluster: the throwaway cluster starts, each test gets a
// database of its own, and a store opened on it is migrated and writes.
func TestPostgresCluster(t *testing.T) {
	for i := range 2 {
		url := storetest.PostgresURL(t)
		st, err := store.Open(t.Context(), url, store.Options{KeyFile: t.TempDir() + "/k"})
		if err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
		if got := st.Dialect(); got != "postgres" {
			t.Errorf("dialect = %q, want postgres", got)
		}
		if _, err := st.GetStream(t.Context(), domain.StreamOrg); err != nil {
			t.Errorf("the org stream a migration creates: %v", err)
		}
		st.Close()
	}
}
