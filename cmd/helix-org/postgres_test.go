package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

// TestPostgresDB: --db takes a postgres:// URL. Bootstrap migrates the
// empty database and mints the owner's token, which a store opened on the
// same database with the same key file verifies; the URL's password never
// appears in an error.
func TestPostgresDB(t *testing.T) {
	url := storetest.PostgresURL(t)
	key := filepath.Join(t.TempDir(), "org.key")
	out := mustRun(t, "bootstrap", "--db", url, "--key-file", key)
	tok := printedToken(t, out)
	st, err := store.Open(t.Context(), url, store.Options{KeyFile: key, Transports: transports.Specs()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if info, err := st.VerifyToken(t.Context(), tok); err != nil || info.WorkerID != store.OwnerWorker {
		t.Errorf("the printed token on the database: %+v, %v; want w-owner's", info, err)
	}
	missing := strings.Replace(url, "postgres:///", "postgres://postgres:s3cret@/", 1)
	missing = strings.Replace(missing, "?", "_missing?", 1)
	if _, _, err := run(t, "", "token", "list", "--db", missing, "--key-file", key); err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("token list on a missing database, with a password in the URL: %v; want an error without the password", err)
	}
}
