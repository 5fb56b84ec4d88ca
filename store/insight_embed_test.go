package store_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// TestHybridRecall: two insights BM25 cannot tell apart for the query
// (each shares only "migration" with it, in texts of one length); with
// memory.hybrid the one worded like the query ("postgres" for
// "postgresql", which no stemmer joins) reads as more relevant and comes
// first. Insights stored before the embeddings read as BM25 alone until
// the migration gives them vectors, and then rank as before.
func TestHybridRecall(t *testing.T) {
	t.Parallel()
	st, _ := insightOrg(t)
	ctx := t.Context()
	pg := storeInsight(t, st, "w-owner", domain.Insight{Trigger: "postgres migration", Resolution: "take a backup first", Scope: domain.ScopeOrg})
	billing := storeInsight(t, st, "w-owner", domain.Insight{Trigger: "billing migration", Resolution: "ask finance first", Scope: domain.ScopeOrg})
	query := "the postgresql migration broke"
	relevance := func(hybrid bool) (first string, rel map[string]float64) {
		t.Helper()
		res, err := st.Recall(ctx, "w-bot", store.RecallQuery{Query: query, Hybrid: hybrid})
		if err != nil {
			t.Fatal(err)
		}
		rel = map[string]float64{}
		for _, r := range res {
			rel[r.Insight.ID] = r.Relevance
		}
		return res[0].Insight.ID, rel
	}
	check := func(name string, hybrid, pgAhead bool) map[string]float64 {
		t.Helper()
		first, rel := relevance(hybrid)
		switch {
		case pgAhead && (first != pg.ID || rel[pg.ID] <= rel[billing.ID]):
			t.Errorf("%s: first %s, relevance %v; want the postgres advice (%s) first and more relevant", name, first, rel, pg.ID)
		case !pgAhead && rel[pg.ID] != rel[billing.ID]:
			t.Errorf("%s: relevance %v; want a tie", name, rel)
		}
		return rel
	}
	check("lexical", false, false)
	before := check("hybrid", true, true)
	if err := st.ForgetEmbeddings(ctx); err != nil {
		t.Fatal(err)
	}
	check("hybrid, stored before the embeddings", true, false)
	if err := st.MigrateEmbeddings(ctx); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, check("hybrid, after the migration", true, true)); diff != "" {
		t.Errorf("relevance after the migration filled the vectors (-before +after):\n%s", diff)
	}
}
