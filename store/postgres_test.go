package store_test

import (
	"fmt"
	"math"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

// These tests open PostgreSQL whatever HELIX_ORG_TEST_DB says: they pin
// what the PostgreSQL dialect promises against the SQLite one.

func openPostgres(t *testing.T, url string, now func() time.Time) *store.Store {
	t.Helper()
	st, err := store.Open(t.Context(), url, store.Options{KeyFile: filepath.Join(t.TempDir(), "key"), Now: now})
	if err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// TestPostgresServersWriteInTurn: two stores on one database — two
// servers — create roles at once, each picking the first free id from the
// same title. Each write sees the ones before it, as on SQLite's single
// writer: every create succeeds and every id is distinct.
func TestPostgresServersWriteInTurn(t *testing.T) {
	t.Parallel()
	url := storetest.PostgresURL(t)
	a := openPostgres(t, url, nil)
	b := openPostgres(t, url, nil)
	if _, err := a.Bootstrap(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	const each = 15
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		ids  = map[string]bool{}
		errs []error
	)
	for _, st := range []*store.Store{a, b} {
		for range each {
			wg.Go(func() {
				r, err := st.CreateRole(t.Context(), store.OwnerWorker, domain.Role{Title: "Ops", Content: "ops"})
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					errs = append(errs, err)
					return
				}
				ids[r.ID] = true
			})
		}
	}
	wg.Wait()
	for _, err := range errs {
		t.Errorf("create role: %v", err)
	}
	if len(ids) != 2*each {
		t.Errorf("%d distinct role ids from %d creates, want %d", len(ids), 2*each, 2*each)
	}
	roles, err := b.ListRoles(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	ops := 0
	for _, r := range roles {
		if r.Title == "Ops" {
			ops++
		}
	}
	if ops != 2*each {
		t.Errorf("the other server lists %d Ops roles, want %d", ops, 2*each)
	}
}

// TestPostgresRanksInsightsLikeSQLite: the same insights recalled with the
// same queries rank in the same order with the same relevance (BM25) on
// both stores.
func TestPostgresRanksInsightsLikeSQLite(t *testing.T) {
	t.Parallel()
	clock := storetest.NewClock(time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC))
	lite, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "org.db"), store.Options{Now: clock.Now, Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lite.Close() })
	pg := openPostgres(t, storetest.PostgresURL(t), clock.Now)
	insights := []domain.Insight{
		{Trigger: "deploy of the payments service fails", Resolution: "run the database migration first, then deploy again", Tags: []string{"deploy", "payments"}},
		{Trigger: "payments webhook times out", Resolution: "raise the webhook timeout to 30 seconds", Tags: []string{"payments", "webhook"}},
		{Trigger: "flaky browser tests", Resolution: "wait for the page to settle before clicking", Tags: []string{"tests", "browser"}},
		{Trigger: "deploy blocked by a red build", Resolution: "fix the failing tests before you deploy; deploys need green builds", Tags: []string{"deploy", "ci"}},
		{Trigger: "migration locks the table", Resolution: "run the migration at night, in batches", Tags: []string{"database", "migration"}},
	}
	for _, st := range []*store.Store{lite, pg} {
		if _, err := st.Bootstrap(t.Context(), nil); err != nil {
			t.Fatal(err)
		}
		for _, in := range insights {
			in.Type, in.Scope = domain.InsightPattern, domain.ScopeOrg
			if _, err := st.StoreInsight(t.Context(), store.OwnerWorker, in, 0.5); err != nil {
				t.Fatal(err)
			}
			clock.Advance(time.Minute)
		}
	}
	for _, q := range []string{"deploy payments", "migration", "tests failing deploy", "webhook timeout", "nothing matches this"} {
		want, err := recalled(t, lite, q)
		if err != nil {
			t.Fatal(err)
		}
		got, err := recalled(t, pg, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Errorf("%q: postgres recalls %v, sqlite %v", q, got, want)
			continue
		}
		for i := range want {
			if got[i].trigger != want[i].trigger || math.Abs(got[i].relevance-want[i].relevance) > 1e-9 {
				t.Errorf("%q #%d: postgres %v, sqlite %v", q, i, got[i], want[i])
			}
		}
	}
}

type recall struct {
	trigger   string
	relevance float64
}

func (r recall) String() string { return fmt.Sprintf("%q %.6f", r.trigger, r.relevance) }

func recalled(t *testing.T, st *store.Store, query string) ([]recall, error) {
	t.Helper()
	res, err := st.Recall(t.Context(), store.OwnerWorker, store.RecallQuery{Query: query, Limit: 10, Mode: domain.RankBaseline})
	var out []recall
	for _, r := range res {
		out = append(out, recall{r.Insight.Trigger, r.Relevance})
	}
	return out, err
}
