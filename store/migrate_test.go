package store_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

// TestSchemaIsAutoMigrateFixedPoint: each row type is auto-migrated once
// per run of the migrations, which holds only if no later step undoes
// what a struct declares. So a fresh database, migrated step by step,
// must be left as it is by AutoMigrate of every row type.
func TestSchemaIsAutoMigrateFixedPoint(t *testing.T) {
	t.Parallel()
	ctx, models := store.RecordMigrated(t.Context())
	st := openEmpty(t, ctx)
	if len(models()) < 50 {
		t.Fatalf("the migrations auto-migrated %d row types, want every table's", len(models()))
	}
	before := schemaOf(t, st)
	if err := st.AutoMigrate(t.Context(), models()...); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, schemaOf(t, st)); diff != "" {
		t.Errorf("AutoMigrate of every row type changed the migrated schema (-migrated +after):\n%s", diff)
	}
}

// TestEventsByStreamHaveOneIndex: events are read by stream through the
// dialect's index, and PostgreSQL keeps no second one that every write
// would pay for — on a new database and on one migration 27 had given it.
func TestEventsByStreamHaveOneIndex(t *testing.T) {
	t.Parallel()
	want, gone := "idx_events_stream_id", "idx_events_stream_seq"
	if storetest.UsePostgres() {
		want, gone = gone, want
	}
	check := func(t *testing.T, st *store.Store) {
		t.Helper()
		idx := indexesOf(t, st, "events")
		if !slices.Contains(idx, want) || slices.Contains(idx, gone) {
			t.Errorf("indexes of events = %v, want %s and not %s", idx, want, gone)
		}
	}
	t.Run("new", func(t *testing.T) {
		check(t, openEmpty(t, t.Context()))
	})
	t.Run("upgraded", func(t *testing.T) {
		db, key := storetest.DB(t), filepath.Join(t.TempDir(), "helix-org.key")
		st := openKeyed(t, t.Context(), db, key)
		if storetest.UsePostgres() {
			// What migrations 1–70 left on PostgreSQL.
			storetest.Exec(t, st, "CREATE INDEX idx_events_stream_id ON events (stream_id)")
		}
		storetest.Exec(t, st, "DELETE FROM schema_migrations WHERE version = 71")
		st.Close()
		check(t, openKeyed(t, t.Context(), db, key))
	})
}

// openEmpty opens a database no store has opened, with ctx: Open
// migrates it from the first step.
func openEmpty(t *testing.T, ctx context.Context) *store.Store {
	t.Helper()
	return openKeyed(t, ctx, storetest.EmptyDB(t), filepath.Join(t.TempDir(), "helix-org.key"))
}

func openKeyed(t *testing.T, ctx context.Context, db, key string) *store.Store {
	t.Helper()
	st, err := store.Open(ctx, db, store.Options{Synchronous: "NORMAL", KeyFile: key})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// schemaOf is the database's schema as lines: SQLite's own text of every
// table, index and trigger; PostgreSQL's columns, indexes, constraints and
// triggers.
func schemaOf(t *testing.T, st *store.Store) []string {
	t.Helper()
	queries := []string{"SELECT type || ' ' || name || ': ' || COALESCE(sql, '') FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name"}
	if storetest.UsePostgres() {
		queries = []string{
			`SELECT table_name || '.' || column_name || ' ' || data_type || ' nullable=' || is_nullable || ' default=' || COALESCE(column_default, '')
			   FROM information_schema.columns WHERE table_schema = 'public' ORDER BY table_name, column_name`,
			"SELECT indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY indexname",
			"SELECT conrelid::regclass || ' ' || conname || ': ' || pg_get_constraintdef(oid) FROM pg_constraint WHERE connamespace = 'public'::regnamespace ORDER BY 1",
			"SELECT tgrelid::regclass || ' ' || tgname FROM pg_trigger WHERE NOT tgisinternal ORDER BY 1",
		}
	}
	var out []string
	for _, q := range queries {
		out = append(out, column(t, st, q)...)
	}
	return out
}

// indexesOf names table's indexes.
func indexesOf(t *testing.T, st *store.Store, table string) []string {
	t.Helper()
	q := "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = '" + table + "' ORDER BY name"
	if storetest.UsePostgres() {
		q = "SELECT indexname FROM pg_indexes WHERE schemaname = 'public' AND tablename = '" + table + "' ORDER BY indexname"
	}
	return column(t, st, q)
}

// column reads one text column of q over a connection of its own.
func column(t *testing.T, st *store.Store, q string) []string {
	t.Helper()
	driver, dsn := "sqlite3", "file:"+st.Path()+"?mode=ro"
	if storetest.UsePostgres() {
		driver, dsn = "pgx", st.Path()
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.QueryContext(t.Context(), q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
