package store_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

// insightOrg is seed plus:
//
//	p-lead (r-a; w-lead, human) reports to p-owner
//	p-bot (r-b; w-bot, ai) reports to p-lead
//	p-other (r-c; w-other, ai) reports to p-owner
func insightOrg(t *testing.T) (*store.Store, *storetest.Clock) {
	t.Helper()
	clock := storetest.NewClock(time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC))
	st := storetest.NewWithClock(t, clock.Now)
	seed(t, st)
	ctx := t.Context()
	for _, r := range []string{"r-b", "r-c"} {
		if _, err := st.CreateRole(ctx, "w-owner", domain.Role{ID: r, Title: r, Content: r}); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []domain.Position{{ID: "p-lead", RoleID: "r-a", Title: "Lead"}, {ID: "p-bot", RoleID: "r-b", Title: "Bot", ReportsTo: "p-lead"},
		{ID: "p-other", RoleID: "r-c", Title: "Other"}} {
		if _, err := st.CreatePosition(ctx, "w-owner", p); err != nil {
			t.Fatal(err)
		}
	}
	for _, w := range []domain.Worker{{ID: "w-lead", Kind: domain.WorkerHuman, PositionID: "p-lead", Name: "lead"},
		{ID: "w-bot", Kind: domain.WorkerAI, PositionID: "p-bot", Name: "bot"}, {ID: "w-other", Kind: domain.WorkerAI, PositionID: "p-other", Name: "other"}} {
		if _, err := st.HireWorker(ctx, "w-owner", w, nil); err != nil {
			t.Fatal(err)
		}
	}
	return st, clock
}

func storeInsight(t *testing.T, st *store.Store, actor string, in domain.Insight) domain.Insight {
	t.Helper()
	if in.Type == "" {
		in.Type = domain.InsightPattern
	}
	if in.Scope == "" {
		in.Scope = domain.ScopeOrg
	}
	got, err := st.StoreInsight(t.Context(), actor, in, 0.5)
	if err != nil {
		t.Fatalf("store insight %q: %v", in.Trigger, err)
	}
	return got
}

func recallIDs(t *testing.T, st *store.Store, reader string, q store.RecallQuery) []string {
	t.Helper()
	res, err := st.Recall(t.Context(), reader, q)
	if err != nil {
		t.Fatalf("recall %q as %s: %v", q.Query, reader, err)
	}
	ids := []string{}
	for _, r := range res {
		ids = append(ids, r.Insight.ID)
	}
	return ids
}

// TestRecallScope: a worker recalls org insights and those of its own
// role, position and self, never another's.
func TestRecallScope(t *testing.T) {
	t.Parallel()
	st, _ := insightOrg(t)
	q := store.RecallQuery{Query: "deploy payments service", Limit: 20}
	ids := map[string]string{}
	for _, s := range []struct{ name, actor, scope, target string }{
		{"org", "w-other", "org", ""},
		{"role-b", "w-lead", "role", "r-b"}, {"role-c", "w-other", "role", "r-c"},
		{"pos-bot", "w-lead", "position", "p-bot"}, {"pos-other", "w-owner", "position", "p-other"},
		{"self-bot", "w-bot", "worker", "w-bot"}, {"self-other", "w-other", "worker", "w-other"},
	} {
		ids[s.name] = storeInsight(t, st, s.actor, domain.Insight{Trigger: "deploy payments " + s.name, Resolution: "run the migration first",
			Scope: domain.InsightScope(s.scope), Target: s.target}).ID
	}
	for _, tc := range []struct {
		reader string
		want   []string
	}{
		{"w-bot", []string{"org", "role-b", "pos-bot", "self-bot"}},
		{"w-other", []string{"org", "role-c", "pos-other", "self-other"}},
		{"w-lead", []string{"org"}},
	} {
		got := map[string]bool{}
		for _, id := range recallIDs(t, st, tc.reader, q) {
			got[id] = true
		}
		want := map[string]bool{}
		for _, n := range tc.want {
			want[ids[n]] = true
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s recalls (-want +got):\n%s", tc.reader, diff)
		}
		list, err := st.ListInsights(t.Context(), tc.reader, store.InsightFilter{})
		if err != nil || len(list) != len(tc.want) {
			t.Errorf("%s lists %d insights (err %v), want %d", tc.reader, len(list), err, len(tc.want))
		}
	}
}

func TestStoreInsightAuthority(t *testing.T) {
	t.Parallel()
	st, _ := insightOrg(t)
	for _, tc := range []struct {
		actor, scope, target string
		wantIs               error
	}{
		{"w-bot", "org", "", nil},
		{"w-lead", "worker", "w-bot", nil},
		{"w-lead", "role", "r-b", nil},
		{"w-bot", "worker", "w-lead", domain.ErrForbidden},
		{"w-bot", "position", "p-lead", domain.ErrForbidden},
		{"w-other", "role", "r-b", domain.ErrForbidden},
		{"w-lead", "worker", "w-nope", domain.ErrNotFound},
		{"w-lead", "role", "r-nope", domain.ErrNotFound},
	} {
		_, err := st.StoreInsight(t.Context(), tc.actor, domain.Insight{Trigger: "x tests", Resolution: "y", Type: domain.InsightFact,
			Scope: domain.InsightScope(tc.scope), Target: tc.target}, 0)
		if (tc.wantIs == nil) != (err == nil) || (err != nil && !errors.Is(err, tc.wantIs)) {
			t.Errorf("%s stores in %s %s: err %v, want %v", tc.actor, tc.scope, tc.target, err, tc.wantIs)
		}
	}
}

// TestCorrectionSupersedes: after a correction no recall returns the old
// version, whatever the query (its own words included); the history
// shows both.
func TestCorrectionSupersedes(t *testing.T) {
	t.Parallel()
	st, _ := insightOrg(t)
	ctx := t.Context()
	old := storeInsight(t, st, "w-bot", domain.Insight{Trigger: "auth tests flaky timeout", Resolution: "increase the zebra timeout", Tags: []string{"auth"}})
	next, err := st.CorrectInsight(ctx, "w-lead", old.ID, store.InsightPatch{Resolution: "use the auth mock instead", Reason: "timeouts were a symptom"})
	if err != nil {
		t.Fatal(err)
	}
	if next.Version != 2 || next.Supersedes != old.ID || next.ID == old.ID {
		t.Errorf("new version = %+v", next)
	}
	for _, q := range []string{"zebra timeout", "auth tests flaky timeout", "increase the zebra timeout auth", "auth"} {
		for _, mode := range []domain.RankMode{domain.RankBaseline, domain.RankLearned} {
			for _, id := range recallIDs(t, st, "w-bot", store.RecallQuery{Query: q, Limit: 50, Mode: mode, Follow: true}) {
				if id == old.ID {
					t.Errorf("recall %q (%s) returned the superseded %s", q, mode, old.ID)
				}
			}
		}
	}
	hist, err := st.ListInsights(ctx, "w-bot", store.InsightFilter{History: next.ID})
	if err != nil || len(hist) != 2 || hist[0].ID != old.ID || hist[0].SupersededBy != next.ID || hist[1].ID != next.ID {
		t.Errorf("history = %+v, %v", hist, err)
	}
	if _, err := st.CorrectInsight(ctx, "w-bot", old.ID, store.InsightPatch{Resolution: "z", Reason: "r"}); !errors.Is(err, domain.ErrConflict) {
		t.Errorf("correcting a superseded version: %v, want conflict", err)
	}
	if _, err := st.CorrectInsight(ctx, "w-other", next.ID, store.InsightPatch{Resolution: "z", Reason: "r"}); !errors.Is(err, domain.ErrForbidden) {
		t.Errorf("a stranger corrects: %v, want forbidden", err)
	}
	if _, err := st.CorrectInsight(ctx, "w-bot", next.ID, store.InsightPatch{Retire: true, Reason: "obsolete"}); err != nil {
		t.Fatal(err)
	}
	if ids := recallIDs(t, st, "w-bot", store.RecallQuery{Query: "auth mock"}); len(ids) != 0 {
		t.Errorf("recall after retiring = %v", ids)
	}
}

// TestLedToCredit: insights stored in a run that was shown others are
// linked led_to from them, and an outcome credits three levels up by the
// documented decay; shown-but-unused insights get nothing.
func TestLedToCredit(t *testing.T) {
	t.Parallel()
	st, _ := insightOrg(t)
	ctx := t.Context()
	a := storeInsight(t, st, "w-bot", domain.Insight{Trigger: "alpha build", Resolution: "one"})
	chain := []domain.Insight{a}
	for i, word := range []string{"bravo", "charlie", "delta"} {
		run := "a-run" + word
		recallIDs(t, st, "w-bot", store.RecallQuery{Query: chain[i].Trigger, Limit: 1, Activation: run})
		chain = append(chain, storeInsight(t, st, "w-bot", domain.Insight{Trigger: word + " build", Resolution: word, Activation: run}))
	}
	links, err := st.InsightLinks(ctx, chain[2].ID)
	if err != nil {
		t.Fatal(err)
	}
	want := []domain.InsightLink{{From: chain[1].ID, To: chain[2].ID, Kind: domain.LinkLedTo}, {From: chain[2].ID, To: chain[3].ID, Kind: domain.LinkLedTo}}
	byEnds := cmpopts.SortSlices(func(a, b domain.InsightLink) bool { return a.From+a.To < b.From+b.To })
	if diff := cmp.Diff(want, links, byEnds); diff != "" {
		t.Fatalf("links of %s (-want +got):\n%s", chain[2].ID, diff)
	}
	// A run is shown delta and the unrelated echo, uses delta only, fails.
	echo := storeInsight(t, st, "w-bot", domain.Insight{Trigger: "echo build", Resolution: "three"})
	recallIDs(t, st, "w-bot", store.RecallQuery{Query: "delta echo build", Limit: 2, Activation: "a-last"})
	if err := st.InsightFeedback(ctx, "w-bot", "a-last", []string{chain[3].ID}, domain.OutcomeUtilized, ""); err != nil {
		t.Fatal(err)
	}
	act, _, _, err := st.Claim(ctx, "w-bot", "a-last", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	act.Status, act.Error = domain.ActivationFailed, "boom"
	if err := st.FinishActivation(ctx, act, domain.Event{StreamID: domain.ActivationStreamPrefix + "w-bot", Message: domain.Message{Body: "exit"}}); err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, in := range append(chain, echo) {
		g, err := st.GetInsight(ctx, in.ID)
		if err != nil {
			t.Fatal(err)
		}
		got[in.Trigger] = g.Stats.CreditFailed
	}
	wantCredit := map[string]float64{"delta build": 1, "charlie build": 0.5, "bravo build": 0.25, "alpha build": 0.125, "echo build": 0}
	if diff := cmp.Diff(wantCredit, got); diff != "" {
		t.Errorf("credit failed (-want +got):\n%s", diff)
	}
	d, _ := st.GetInsight(ctx, chain[3].ID)
	e, _ := st.GetInsight(ctx, echo.ID)
	if d.Stats.Failed != 1 || d.Stats.Utilized != 1 || d.Stats.Injected != 1 || e.Stats.Injected != 1 || e.Stats.Utilized != 0 {
		t.Errorf("counters: delta %+v, echo %+v", d.Stats, e.Stats)
	}
}

// TestSimilarLinksAndFollow: a near-duplicate is linked automatically and
// recall with follow brings in a linked insight the query does not match,
// marked with the link.
func TestSimilarLinksAndFollow(t *testing.T) {
	t.Parallel()
	st, _ := insightOrg(t)
	a := storeInsight(t, st, "w-bot", domain.Insight{Trigger: "payments module blocked builder", Resolution: "ask finance for the sandbox key"})
	b := storeInsight(t, st, "w-bot", domain.Insight{Trigger: "payments module blocked builder again", Resolution: "ask finance for the sandbox key"})
	c := storeInsight(t, st, "w-bot", domain.Insight{Trigger: "invoices rounding", Resolution: "banker's rounding"})
	if err := st.LinkInsights(t.Context(), "w-bot", domain.InsightLink{From: c.ID, To: a.ID, Kind: domain.LinkSimilar}); err != nil {
		t.Fatal(err)
	}
	links, _ := st.InsightLinks(t.Context(), b.ID)
	if len(links) != 1 || links[0].Kind != domain.LinkSimilar || links[0].Similarity < 0.5 {
		t.Errorf("links of the near-duplicate = %+v", links)
	}
	res, err := st.Recall(t.Context(), "w-bot", store.RecallQuery{Query: "invoices rounding", Follow: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || res[0].Insight.ID != c.ID || res[1].Insight.ID != a.ID || res[1].Via != c.ID || res[1].ViaKind != domain.LinkSimilar {
		t.Errorf("recall with follow = %+v", res)
	}
}

func TestRecallBadInput(t *testing.T) {
	t.Parallel()
	st, _ := insightOrg(t)
	for _, tc := range []struct {
		q    store.RecallQuery
		want string
	}{
		{store.RecallQuery{Query: "the a"}, `query: has no words to search for`},
		{store.RecallQuery{Query: "deploy", Limit: 51}, "limit: from 1 to 50 (default 5); got 51"},
	} {
		if _, err := st.Recall(t.Context(), "w-bot", tc.q); err == nil || !errors.Is(err, domain.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("recall %+v: %v, want %q", tc.q, err, tc.want)
		}
	}
}

// TestFollowKeepsScope: following a link never brings in an insight the
// reader may not recall.
func TestFollowKeepsScope(t *testing.T) {
	t.Parallel()
	st, _ := insightOrg(t)
	open := storeInsight(t, st, "w-owner", domain.Insight{Trigger: "rotate the api keys", Resolution: "monthly"})
	hidden := storeInsight(t, st, "w-other", domain.Insight{Trigger: "other's secret routine", Resolution: "x", Scope: domain.ScopeWorker, Target: "w-other"})
	if err := st.LinkInsights(t.Context(), "w-owner", domain.InsightLink{From: open.ID, To: hidden.ID, Kind: domain.LinkLedTo}); err != nil {
		t.Fatal(err)
	}
	if got := recallIDs(t, st, "w-bot", store.RecallQuery{Query: "rotate api keys", Follow: true}); len(got) != 1 || got[0] != open.ID {
		t.Errorf("w-bot recalls %v, want only %s", got, open.ID)
	}
	if got := recallIDs(t, st, "w-other", store.RecallQuery{Query: "rotate api keys", Follow: true}); len(got) != 2 {
		t.Errorf("w-other recalls %v, want both", got)
	}
	if err := st.LinkInsights(t.Context(), "w-bot", domain.InsightLink{From: open.ID, To: hidden.ID, Kind: domain.LinkSimilar}); !errors.Is(err, domain.ErrForbidden) {
		t.Errorf("w-bot links to an insight it cannot recall: %v", err)
	}
}

// TestRecallRanksLikeFullScan: recall reads counters only for the
// matches that can still reach the top, and returns exactly what ranking
// every match the reader sees returns — same insights, order and scores
// — for readers in different roles and positions, both modes, any limit.
func TestRecallRanksLikeFullScan(t *testing.T) {
	t.Parallel()
	clock := storetest.NewClock(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC))
	st := storetest.NewWith(t, store.Options{Now: clock.Now})
	newRecallWorld(t, st, 20)
	ctx := t.Context()
	queries := append(recallQueries(30, 20), "k3x1 v17 v4000 v2500 v999", "k7x2", "v1 v2 v3 v4 v5 v6 v7 v8 v9 v10 v11 v12")
	for _, reader := range []string{"w-0", "w-13", "w-151"} {
		for _, mode := range []domain.RankMode{domain.RankBaseline, domain.RankLearned} {
			for _, limit := range []int{1, 5, 50} {
				for _, q := range queries {
					hybrid := len(q)%2 == 0 // half the queries each way
					want, err := st.RecallReference(ctx, reader, q, mode, hybrid, limit)
					if err != nil {
						t.Fatal(err)
					}
					res, err := st.Recall(ctx, reader, store.RecallQuery{Query: q, Limit: limit, Mode: mode, Hybrid: hybrid})
					if err != nil {
						t.Fatal(err)
					}
					got := make([]domain.Ranked, len(res))
					for i, r := range res {
						got[i] = r.Ranked
					}
					parts := func(rs []domain.Ranked) []string {
						var out []string
						for _, r := range rs {
							out = append(out, fmt.Sprintf("%s %v %v %v %v %v", r.Insight.ID, r.Score, r.Relevance, r.Effectiveness, r.Recency, r.Sunk))
						}
						return out
					}
					if diff := cmp.Diff(parts(want), parts(got)); diff != "" {
						t.Errorf("%s recalls %q (%s, hybrid %v, limit %d), -full scan +recall:\n%s", reader, q, mode, hybrid, limit, diff)
					}
				}
			}
		}
	}
}

// TestInsightIDsReplay: a store given a seeded InsightIDs names its
// insights (new and corrected) the same way every time, so a simulated
// world, whose ranking breaks ties by id, replays; another seed names
// them differently.
func TestInsightIDsReplay(t *testing.T) {
	t.Parallel()
	ids := func(seed byte) []string {
		t.Helper()
		ctx := t.Context()
		st := storetest.NewWith(t, store.Options{InsightIDs: rand.NewChaCha8([32]byte{seed})})
		if _, err := st.Bootstrap(ctx, nil); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, text := range []string{"deploys fail on friday", "the cache needs warming"} {
			in, err := st.StoreInsight(ctx, store.OwnerWorker, domain.Insight{Trigger: text, Resolution: "wait", Type: domain.InsightPattern, Scope: domain.ScopeOrg}, 0)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, in.ID)
		}
		next, err := st.CorrectInsight(ctx, store.OwnerWorker, out[0], store.InsightPatch{Resolution: "wait an hour", Reason: "measured"})
		if err != nil {
			t.Fatal(err)
		}
		return append(out, next.ID)
	}
	first, again, other := ids(1), ids(1), ids(2)
	if diff := cmp.Diff(first, again); diff != "" {
		t.Errorf("same seed, different ids (-first +again):\n%s", diff)
	}
	for i := range first {
		if !strings.HasPrefix(first[i], domain.PrefixInsight) || first[i] == other[i] {
			t.Errorf("id %d: seed 1 %q, seed 2 %q; want %q ids that differ by seed", i, first[i], other[i], domain.PrefixInsight)
		}
	}
}
