package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
)

// TestBackupWhileServing: a backup taken while the server takes writes is
// a consistent database with its key beside it, both owner-only; the
// copy opens with its key and reads its secrets.
func TestBackupWhileServing(t *testing.T) {
	db := newDB(t)
	st := openStore(t, db)
	if err := st.SetSetting(t.Context(), agent.APIKeySetting, secret); err != nil {
		t.Fatal(err)
	}
	_, _, owner := startServe(t, st, io.Discard)
	servertest.Call[any](t, owner, "create_stream", map[string]any{"id": "s-load", "name": "load"})
	servertest.Call[any](t, owner, "subscribe", map[string]any{"stream": "s-load"})

	// Writes go on, over MCP, while the backup runs.
	ctx, stop := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ctx.Err() == nil; i++ {
			owner.CallTool(ctx, publishParams(fmt.Sprint(i)))
		}
	}()
	until(t, time.Minute, "writes under way", func() bool { n, _ := st.CountEvents(t.Context(), "s-load"); return n >= 50 })
	dst := filepath.Join(t.TempDir(), "copy.db")
	out := mustRun(t, "backup", dst, "--db", db)
	stop()
	wg.Wait()
	if want := fmt.Sprintf("backed up %s to %s, and its key file to %s.key\n", db, dst, dst); out != want {
		t.Errorf("backup output = %q, want %q", out, want)
	}
	for _, f := range []string{dst, dst + ".key"} {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s mode = %v, want 0600", f, fi.Mode().Perm())
		}
	}

	cp, err := store.Open(t.Context(), dst, store.Options{})
	if err != nil {
		t.Fatalf("open the backup: %v", err)
	}
	defer cp.Close()
	var check string
	if err := rawSQL(t, dst).QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Errorf("integrity_check = %q, %v", check, err)
	}
	if v, ok, err := cp.Setting(t.Context(), agent.APIKeySetting.Key); err != nil || !ok || v != secret {
		t.Errorf("the backup's secret reads %q (%v, %v) with its key file", v, ok, err)
	}
	if _, err := cp.GetStream(t.Context(), "s-load"); err != nil {
		t.Errorf("the backup lacks a stream made before it: %v", err)
	}
	evs, err := cp.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{"s-load"}, Limit: 100000})
	if err != nil {
		t.Fatal(err)
	}
	for i, ev := range evs {
		if ev.Message.Body != fmt.Sprint(i) {
			t.Fatalf("event %d of the backup has body %q: the copy is not one consistent snapshot", i, ev.Message.Body)
		}
	}
	if len(evs) < 50 {
		t.Errorf("the backup holds %d events; at least 50 were published before it began", len(evs))
	}
	t.Logf("%d events published before the snapshot", len(evs))

	_, _, err = run(t, "", "backup", dst, "--db", db)
	if want := "back up to " + dst + ": " + dst + ".key exists; choose a new name"; err == nil || err.Error() != want {
		t.Errorf("backup over an existing file: %v, want %s", err, want)
	}
	other := filepath.Join(t.TempDir(), "x.db")
	os.WriteFile(other, nil, 0o600)
	_, _, err = run(t, "", "backup", other, "--db", db)
	if want := "back up to " + other + ": the file exists; choose a new name"; err == nil || err.Error() != want {
		t.Errorf("backup over an existing file: %v, want %s", err, want)
	}
}

func publishParams(body string) *mcp.CallToolParams {
	return &mcp.CallToolParams{Name: "publish", Arguments: map[string]any{"stream": "s-load", "body": body}}
}

// rawSQL opens a database file with plain database/sql, beside the store.
func rawSQL(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
