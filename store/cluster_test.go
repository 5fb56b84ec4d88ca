package store_test

import (
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
	// database/sql's "pgx", to cut the listening connections.
	_ "github.com/jackc/pgx/v5/stdlib"
)

// hireAI seeds the org and an AI worker w-ai following s-a.
func hireAI(t *testing.T, st *store.Store) {
	t.Helper()
	ctx := t.Context()
	seed(t, st)
	if _, err := st.HireWorker(ctx, "w-owner", domain.Worker{ID: "w-ai", Kind: domain.WorkerAI, PositionID: "p-a", Name: "ai"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Subscribe(ctx, "w-owner", "s-a", "w-ai"); err != nil {
		t.Fatal(err)
	}
}

func publishOne(t *testing.T, st *store.Store, body string) {
	t.Helper()
	if _, err := st.Append(t.Context(), domain.Event{StreamID: "s-a", Source: "w-owner", Message: domain.Message{Body: body}}, store.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestClaimRefusesAWorkerThatRuns: one run per worker. While w-ai runs,
// what arrives for it waits — Claim finds nothing to run and the
// dispatcher is not even offered the worker — and it is claimed once the
// run ends.
func TestClaimRefusesAWorkerThatRuns(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	hireAI(t, st)
	ctx := t.Context()
	if _, _, _, err := st.ClaimLeased(ctx, "w-ai", "a-1", time.Minute, time.Minute); err != nil {
		t.Fatal(err)
	}
	publishOne(t, st, "while it runs")
	_, _, _, err := st.Claim(ctx, "w-ai", "a-2", time.Minute)
	if !errors.Is(err, domain.ErrNotFound) || !strings.Contains(err.Error(), "already runs activation a-1") {
		t.Errorf("claim while a-1 runs = %v, want ErrNotFound naming a-1", err)
	}
	if ws, err := st.WorkersWithPending(ctx); err != nil || len(ws) != 0 {
		t.Errorf("workers with pending triggers while w-ai runs = %v, %v; want none", ws, err)
	}
	a1, _ := st.GetActivation(ctx, "a-1")
	a1.Status = domain.ActivationSucceeded
	if err := st.FinishActivation(ctx, a1, exitLog()); err != nil {
		t.Fatal(err)
	}
	if ws, err := st.WorkersWithPending(ctx); err != nil || len(ws) != 1 {
		t.Errorf("workers with pending triggers after the run = %v, %v; want w-ai", ws, err)
	}
	_, trigs, _, err := st.Claim(ctx, "w-ai", "a-2", time.Minute)
	if err != nil || len(trigs) != 1 || trigs[0].Event.Message.Body != "while it runs" {
		t.Errorf("claim after the run = %+v, %v; want the event that waited", trigs, err)
	}
}

// TestPostgresServersClaimOneRunPerWorker: two servers on one database
// race to claim the same workers' triggers; each trigger goes to exactly
// one run and no worker gets two runs at once.
func TestPostgresServersClaimOneRunPerWorker(t *testing.T) {
	t.Parallel()
	url := storetest.PostgresURL(t)
	a, b := openPostgres(t, url, nil), openPostgres(t, url, nil)
	hireAI(t, a)
	ctx := t.Context()
	for i := range 5 {
		publishOne(t, a, fmt.Sprint("job ", i))
	}
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		claimed = map[int64]string{}
		runs    []string
	)
	for i, st := range []*store.Store{a, b, a, b, a, b, a, b} {
		wg.Go(func() {
			id := fmt.Sprint("a-", i)
			_, trigs, _, err := st.ClaimLeased(ctx, "w-ai", id, time.Minute, time.Minute)
			if errors.Is(err, domain.ErrNotFound) {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				t.Errorf("claim %s: %v", id, err)
				return
			}
			runs = append(runs, id)
			for _, tr := range trigs {
				if other, ok := claimed[tr.ID]; ok {
					t.Errorf("trigger %d claimed by %s and %s", tr.ID, other, id)
				}
				claimed[tr.ID] = id
			}
		})
	}
	wg.Wait()
	if len(runs) != 1 || len(claimed) != 6 { // the hire trigger and five events
		t.Errorf("runs %v over %d triggers; want one run of all 6", runs, len(claimed))
	}
}

// TestRecoverOnASharedDatabase: a server starting on a database of its
// own recovers every running activation; on a shared one (PostgreSQL) it
// leaves those whose lease is live — another server runs them — and
// recovers those whose lease lapsed or was never taken. A lease that
// lapses between the look and the write is not recovered: nobody asked
// whether its agent lives (a Kubernetes Job outliving its server).
func TestRecoverOnASharedDatabase(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name          string
		db            func(t testing.TB) string
		wantRecovered []string
	}{
		{"sqlite", func(t testing.TB) string { return filepath.Join(t.TempDir(), "org.db") }, []string{"a-lapsed", "a-live", "a-unleased"}},
		{"postgres", storetest.PostgresURL, []string{"a-lapsed", "a-unleased"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := storetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			st := openDB(t, tc.db(t), clock.Now)
			seed(t, st)
			ctx := t.Context()
			leases := map[string]time.Duration{"a-lapsed": time.Second, "a-live": time.Hour, "a-unleased": 0}
			for _, id := range []string{"a-lapsed", "a-live", "a-unleased"} {
				w := "w-" + strings.TrimPrefix(id, "a-")
				if _, err := st.HireWorker(ctx, "w-owner", domain.Worker{ID: w, Kind: domain.WorkerAI, PositionID: "p-a", Name: w}, nil); err != nil {
					t.Fatal(err)
				}
				if _, _, _, err := st.ClaimLeased(ctx, w, id, time.Hour, leases[id]); err != nil {
					t.Fatal(err)
				}
			}
			clock.Advance(time.Minute)
			orphans, err := st.OrphanedActivations(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, a := range orphans {
				ids = append(ids, a.ID)
			}
			if fmt.Sprint(ids) != fmt.Sprint(tc.wantRecovered) {
				t.Errorf("orphaned = %v, want %v", ids, tc.wantRecovered)
			}
			clock.Advance(2 * time.Hour) // a-live's lease lapses after the look
			n, err := st.RecoverActivations(ctx, ids, nil)
			if err != nil || n != len(tc.wantRecovered) {
				t.Errorf("recovered %d, %v; want %d", n, err, len(tc.wantRecovered))
			}
			for _, id := range []string{"a-lapsed", "a-live", "a-unleased"} {
				a, _ := st.GetActivation(ctx, id)
				want := domain.ActivationRunning
				if strings.Contains(fmt.Sprint(tc.wantRecovered), id) {
					want = domain.ActivationInterrupted
				}
				if a.Status != want {
					t.Errorf("%s is %s, want %s", id, a.Status, want)
				}
			}
			// The live run's hire trigger stays its own.
			trigs, _ := st.ListTriggers(ctx, store.TriggerQuery{Statuses: []domain.TriggerStatus{domain.TriggerClaimed}})
			if wantClaimed := 3 - len(tc.wantRecovered); len(trigs) != wantClaimed {
				t.Errorf("%d triggers still claimed, want %d", len(trigs), wantClaimed)
			}
		})
	}
}

func openDB(t *testing.T, db string, now func() time.Time) *store.Store {
	t.Helper()
	st, err := store.Open(t.Context(), db, store.Options{KeyFile: filepath.Join(t.TempDir(), "key"), Now: now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// TestPostgresWakesOtherServers: a commit on one server wakes the
// long-polls of another (LISTEN/NOTIFY), also after the listening
// connection was cut and came back.
func TestPostgresWakesOtherServers(t *testing.T) {
	t.Parallel()
	url := storetest.PostgresURL(t)
	a, b := openPostgres(t, url, nil), openPostgres(t, url, nil)
	seed(t, a)
	woken := func(what string) {
		t.Helper()
		changed := b.Changed()
		publishOne(t, a, what)
		select {
		case <-changed:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the other server was not woken within 10s", what)
		}
	}
	woken("first")
	woken("second")
	// Cut every listening connection; b's comes back on its own.
	admin, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	const listeners = "FROM pg_stat_activity WHERE application_name = 'helix-org listen' AND datname = current_database()"
	for n, deadline := 0, time.Now().Add(10*time.Second); n < 2; {
		if err := admin.QueryRowContext(t.Context(), "SELECT count(*) "+listeners).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d listening connections after 10s, want a's and b's", n)
		}
	}
	if _, err := admin.ExecContext(t.Context(), "SELECT pg_terminate_backend(pid) "+listeners); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		changed := b.Changed()
		publishOne(t, a, "after the cut")
		select {
		case <-changed:
			return
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("the other server was not woken within 10s of its listener being cut")
		}
	}
}
