package storetest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/helixml/helix-org/store"
)

// A migrated SQLite database, made once per test binary: each store New
// opens is a copy of it, as PostgreSQL tests copy their template
// database. Migrating anew costs a store about 85 ms under -race; a copy
// costs a few.
var sqliteTemplate struct {
	once sync.Once
	path string
	err  error
}

// sqliteCopy copies the template database and its key into t's temp dir
// and returns the copy's path.
func sqliteCopy(t testing.TB) string {
	t.Helper()
	sqliteTemplate.once.Do(func() { sqliteTemplate.path, sqliteTemplate.err = migrateSQLiteTemplate() })
	if sqliteTemplate.err != nil {
		t.Fatalf("sqlite template database: %v", sqliteTemplate.err)
	}
	db := filepath.Join(t.TempDir(), "helix-org.db")
	// The key file too, should the store have made one (it makes it on
	// first use).
	for _, suffix := range []string{"", ".key"} {
		if err := copyFile(sqliteTemplate.path+suffix, db+suffix); err != nil && !(suffix != "" && errors.Is(err, fs.ErrNotExist)) {
			t.Fatalf("copy the template database: %v", err)
		}
	}
	return db
}

// migrateSQLiteTemplate migrates a fresh file under a directory of this
// process's own; directories of processes that have exited are removed
// (the template outlives every test, so no test's cleanup can).
func migrateSQLiteTemplate() (string, error) {
	base := filepath.Join(os.TempDir(), "helix-org-sqlitetest")
	if err := os.MkdirAll(base, 0o755); err != nil {
		return "", err
	}
	removeStaleTemplates(base)
	dir, err := os.MkdirTemp(base, strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "helix-org.db")
	st, err := store.Open(context.Background(), path, store.Options{Synchronous: "NORMAL"})
	if err != nil {
		return "", fmt.Errorf("migrate: %w", err)
	}
	// Closing the last connection checkpoints the WAL into the file and
	// removes it, so the file alone is the whole database.
	if err := st.Close(); err != nil {
		return "", err
	}
	return path, nil
}

func removeStaleTemplates(base string) {
	entries, _ := os.ReadDir(base)
	for _, e := range entries {
		if pid, ok := pidOf(e.Name()); ok && pid != os.Getpid() && !alive(pid) {
			os.RemoveAll(filepath.Join(base, e.Name()))
		}
	}
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
