package domain_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
)

// TestCreditAlongLedTo pins the documented decay: in the chain
// i-a led_to i-b led_to i-c led_to i-d, an outcome of i-d moves i-d by 1,
// i-c by 0.5, i-b by 0.25 and i-a by 0.125; an insight beside the chain
// does not move.
func TestCreditAlongLedTo(t *testing.T) {
	ledTo := map[string][]string{"i-d": {"i-c"}, "i-c": {"i-b"}, "i-b": {"i-a"}, "i-a": {"i-d"}}
	parents := func(id string) ([]string, error) { return ledTo[id], nil }
	for _, tc := range []struct {
		outcome       domain.InsightOutcome
		wantH, wantF  map[string]float64
		wantDirectOfD [2]int
	}{
		{domain.OutcomeHelped, map[string]float64{"i-d": 1, "i-c": 0.5, "i-b": 0.25, "i-a": 0.125, "i-x": 0}, map[string]float64{"i-d": 0, "i-c": 0, "i-b": 0, "i-a": 0, "i-x": 0}, [2]int{1, 0}},
		{domain.OutcomeFailed, map[string]float64{"i-d": 0, "i-c": 0, "i-b": 0, "i-a": 0, "i-x": 0}, map[string]float64{"i-d": 1, "i-c": 0.5, "i-b": 0.25, "i-a": 0.125, "i-x": 0}, [2]int{0, 1}},
	} {
		t.Run(string(tc.outcome), func(t *testing.T) {
			stats := map[string]*domain.InsightStats{"i-a": {}, "i-b": {}, "i-c": {}, "i-d": {}, "i-x": {}}
			depths, err := domain.CreditDepths("i-d", parents)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(map[string]int{"i-d": 0, "i-c": 1, "i-b": 2, "i-a": 3}, depths); diff != "" {
				t.Errorf("depths (-want +got):\n%s", diff)
			}
			for id, d := range depths {
				stats[id].Credit(tc.outcome, domain.CreditWeight(d), b2i(d == 0))
			}
			gotH, gotF := map[string]float64{}, map[string]float64{}
			for id, s := range stats {
				gotH[id], gotF[id] = s.CreditHelped, s.CreditFailed
			}
			if diff := cmp.Diff(tc.wantH, gotH); diff != "" {
				t.Errorf("credit helped (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantF, gotF); diff != "" {
				t.Errorf("credit failed (-want +got):\n%s", diff)
			}
			if got := [2]int{stats["i-d"].Helped, stats["i-d"].Failed}; got != tc.wantDirectOfD {
				t.Errorf("direct counters of i-d = %v, want %v", got, tc.wantDirectOfD)
			}
			if stats["i-c"].Helped+stats["i-c"].Failed != 0 {
				t.Errorf("an ancestor's direct counters moved: %+v", stats["i-c"])
			}
		})
	}
}

func TestEffectiveness(t *testing.T) {
	for _, tc := range []struct {
		name              string
		s                 domain.InsightStats
		baseline, learned float64
	}{
		{"no feedback", domain.InsightStats{}, 0.5, 0.5},
		{"one failure buries it in the baseline, odds 1:4 in learned", domain.InsightStats{Failed: 1, CreditFailed: 1}, 0, 1.0 / 5},
		{"3 of 4 helped: two more successes than failures, odds 16:1", domain.InsightStats{Helped: 3, Failed: 1, CreditHelped: 3, CreditFailed: 1}, 0.75, 16.0 / 17},
		{"long-proven advice survives one failure", domain.InsightStats{Helped: 5, Failed: 1, CreditHelped: 5, CreditFailed: 1}, 5.0 / 6, 256.0 / 257},
		{"credit from descendants counts in learned only", domain.InsightStats{CreditHelped: 0.5}, 0.5, 2.0 / 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.s.BaselineEffectiveness(); got != tc.baseline {
				t.Errorf("baseline = %v, want %v", got, tc.baseline)
			}
			if got := tc.s.LearnedEffectiveness(); math.Abs(got-tc.learned) > 1e-12 {
				t.Errorf("learned = %v, want %v", got, tc.learned)
			}
		})
	}
}

func TestRecency(t *testing.T) {
	now := time.Date(2026, 3, 15, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name          string
		last, created time.Time
		want          float64
	}{
		{"used now", now, now.AddDate(0, 0, -30), 1},
		{"used a week ago", now.AddDate(0, 0, -7), time.Time{}, 0.5},
		{"never used, created two weeks ago", time.Time{}, now.AddDate(0, 0, -14), 0.25},
		{"clock skew counts as now", now.Add(time.Hour), time.Time{}, 1},
	} {
		if got := domain.Recency(tc.last, tc.created, now); got != tc.want {
			t.Errorf("%s: recency = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestRank(t *testing.T) {
	now := time.Date(2026, 3, 15, 0, 0, 0, 0, time.UTC)
	ins := func(id string, s domain.InsightStats) domain.Insight {
		return domain.Insight{ID: id, Type: domain.InsightPattern, CreatedAt: now, Stats: s}
	}
	// Baseline: 0.5·1 + 0.3·0.25 + 0.2·1 = 0.775 beats 0.5·0.5 + 0.3·1 + 0.2·1 = 0.75.
	failing := domain.InsightStats{Helped: 1, Failed: 3, CreditHelped: 1, CreditFailed: 3}
	cands := []domain.Candidate{
		{Insight: ins("i-reads-well", failing), BM25: 4},
		{Insight: ins("i-helps", domain.InsightStats{Helped: 3, CreditHelped: 3}), BM25: 2},
		{Insight: ins("i-new", domain.InsightStats{}), BM25: 2},
	}
	ids := func(rs []domain.Ranked) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.Insight.ID)
		}
		return out
	}
	base := domain.Rank(domain.RankBaseline, cands, now, 0)
	if diff := cmp.Diff([]string{"i-reads-well", "i-helps", "i-new"}, ids(base)); diff != "" {
		t.Errorf("baseline order (-want +got):\n%s", diff)
	}
	if r := base[0]; math.Abs(r.Score-0.775) > 1e-12 || r.Relevance != 1 || r.Effectiveness != 0.25 || r.Recency != 1 {
		t.Errorf("baseline parts of i-reads-well = %+v", r)
	}
	learned := domain.Rank(domain.RankLearned, cands, now, 2)
	if diff := cmp.Diff([]string{"i-helps", "i-new"}, ids(learned)); diff != "" {
		t.Errorf("learned order (-want +got):\n%s", diff)
	}
	if r := domain.Rank(domain.RankLearned, cands, now, 0)[2]; !r.Sunk || r.Insight.ID != "i-reads-well" {
		t.Errorf("last learned = %+v, want i-reads-well sunk", r)
	}
	// A quarantined insight that reads best comes after the rest, even
	// sunk ones, and is not what their relevance is measured against.
	proposal := ins("i-proposal", domain.InsightStats{})
	proposal.Label = domain.Untrusted("a web page")
	with := append(slices.Clone(cands), domain.Candidate{Insight: proposal, BM25: 8})
	for _, mode := range []domain.RankMode{domain.RankBaseline, domain.RankLearned} {
		got, want := domain.Rank(mode, with, now, 0), domain.Rank(mode, cands, now, 0)
		if diff := cmp.Diff(want, got[:len(cands)]); diff != "" {
			t.Errorf("%s: the others beside a quarantined insight (-without +with):\n%s", mode, diff)
		}
		if last := got[len(cands)]; last.Insight.ID != "i-proposal" || last.Relevance != 1 {
			t.Errorf("%s: last = %s at relevance %v, want i-proposal at 1", mode, last.Insight.ID, last.Relevance)
		}
	}
}

func TestBM25(t *testing.T) {
	c := domain.CorpusStats{Docs: 10, AvgLen: []float64{4, 8, 1}, DF: [][]int{{2, 0, 0}}}
	one := domain.BM25(c, domain.FieldHits{Len: []int{4, 8, 1}, TF: [][]int{{1, 0, 0}}})
	two := domain.BM25(c, domain.FieldHits{Len: []int{4, 8, 1}, TF: [][]int{{2, 0, 0}}})
	long := domain.BM25(c, domain.FieldHits{Len: []int{16, 8, 1}, TF: [][]int{{1, 0, 0}}})
	want := math.Log(1+8.5/2.5) * 2.2 / (1 + 1.2)
	if math.Abs(one-want) > 1e-12 {
		t.Errorf("bm25 one hit = %v, want %v", one, want)
	}
	if !(two > one && long < one) {
		t.Errorf("bm25: two hits %v, one %v, one in a long field %v", two, one, long)
	}
}

func TestTermsAndSimilarity(t *testing.T) {
	if diff := cmp.Diff([]string{"payments", "tests", "need", "mock"}, domain.Terms("The payments tests need a MOCK; the mock.")); diff != "" {
		t.Errorf("terms (-want +got):\n%s", diff)
	}
	if got := domain.Similarity("auth tests need a mock", "the auth tests need mocks"); got != 0.6 {
		t.Errorf("similarity = %v, want 0.6", got)
	}
}

func TestInsightValidate(t *testing.T) {
	ok := domain.Insight{Trigger: "t", Resolution: "r", Type: domain.InsightFact, Scope: domain.ScopeOrg}
	for _, tc := range []struct {
		name string
		mod  func(*domain.Insight)
		want string
	}{
		{"valid", func(*domain.Insight) {}, ""},
		{"no trigger", func(in *domain.Insight) { in.Trigger = " " }, "trigger: is required"},
		{"bad type", func(in *domain.Insight) { in.Type = "tip" }, `type: unknown insight type "tip" (valid: "pattern", "failure", "preference", "fact")`},
		{"bad scope", func(in *domain.Insight) { in.Scope = "team" }, `scope: unknown insight scope "team" (valid: "org", "role", "position", "worker")`},
		{"org with target", func(in *domain.Insight) { in.Target = "w-x" }, `target: an org insight has no target; omit it (got "w-x")`},
		{"role without role", func(in *domain.Insight) { in.Scope, in.Target = domain.ScopeRole, "p-x" }, `target: a role insight needs the role's id (r-…) as target; got "p-x"`},
		{"tag with space", func(in *domain.Insight) { in.Tags = []string{"a b"} }, `tags[0]: a tag is one word without spaces; got "a b"`},
	} {
		in := ok
		tc.mod(&in)
		err := in.Validate()
		if (err == nil) != (tc.want == "") || (err != nil && err.Error() != tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestRankMatches: loading matches best BM25 first and stopping once
// none left can reach the top ranks exactly as Rank over every visible
// candidate does — in both modes, for any limit, with ties, sunk,
// quarantined and hidden candidates — and leaves weak matches unread
// when the top is clear.
func TestRankMatches(t *testing.T) {
	now := time.Date(2026, 3, 15, 0, 0, 0, 0, time.UTC)
	type world struct {
		matches []domain.Match
		cands   map[int64]domain.Candidate // the visible ones
	}
	gen := func(seed uint64, n int) world {
		rng := rand.New(rand.NewPCG(seed, 1))
		w := world{cands: map[int64]domain.Candidate{}}
		for d := range int64(n) {
			// Few BM25 values, so ties happen; a tenth hidden (another
			// scope); counters that sink some in the learned mode.
			bm, sem := float64(1+rng.IntN(12))/4, float64(rng.IntN(5))/4
			w.matches = append(w.matches, domain.Match{Doc: d, BM25: bm})
			if rng.IntN(10) == 0 {
				continue
			}
			h, f := rng.IntN(5), rng.IntN(6)
			in := domain.Insight{ID: fmt.Sprintf("i-%03d", d), CreatedAt: now.Add(-time.Duration(rng.IntN(40*24)) * time.Hour),
				Stats: domain.InsightStats{Helped: h, Failed: f, CreditHelped: float64(h), CreditFailed: float64(f)}}
			if rng.IntN(2) == 0 {
				in.Stats.LastUsed = now.Add(-time.Duration(rng.IntN(20*24)) * time.Hour)
			}
			if rng.IntN(6) == 0 {
				in.Label = domain.Untrusted("a web page") // quarantined
			}
			w.cands[d] = domain.Candidate{Insight: in, BM25: bm, Semantic: sem}
		}
		return w
	}
	ids := func(rs []domain.Ranked) []string {
		var out []string
		for _, r := range rs {
			out = append(out, fmt.Sprintf("%s %.17g", r.Insight.ID, r.Score))
		}
		return out
	}
	for seed := range uint64(40) {
		w := gen(seed, 5+int(seed)*7)
		for _, hybrid := range []bool{false, true} {
			// Hybrid: a candidate's cosine is known only once loaded.
			cand := func(d int64) (domain.Candidate, bool) {
				c, ok := w.cands[d]
				c.Hybrid = hybrid
				if !hybrid {
					c.Semantic = 0
				}
				return c, ok
			}
			matches := slices.Clone(w.matches)
			var all []domain.Candidate
			for i, m := range matches {
				matches[i].Hybrid = hybrid
				if c, ok := cand(m.Doc); ok {
					all = append(all, c)
				}
			}
			for _, mode := range []domain.RankMode{domain.RankBaseline, domain.RankLearned} {
				for _, limit := range []int{0, 1, 3, 5, 20} {
					loaded := 0
					got, err := domain.RankMatches(mode, slices.Clone(matches), func(dst []domain.Candidate, ms []domain.Match) ([]domain.Candidate, error) {
						loaded += len(ms)
						for _, m := range ms {
							if c, ok := cand(m.Doc); ok {
								dst = append(dst, c)
							}
						}
						return dst, nil
					}, now, limit)
					if err != nil {
						t.Fatal(err)
					}
					want := domain.Rank(mode, all, now, limit)
					if diff := cmp.Diff(ids(want), ids(got)); diff != "" {
						t.Errorf("seed %d, %s, hybrid %v, limit %d (-Rank +RankMatches):\n%s", seed, mode, hybrid, limit, diff)
					}
					if loaded > len(w.matches) {
						t.Errorf("seed %d: loaded %d of %d matches", seed, loaded, len(w.matches))
					}
				}
			}
		}
	}

	// A clear top: 5 strong matches that helped, then 1,000 that barely
	// match. Only the first batch is read.
	w := world{cands: map[int64]domain.Candidate{}}
	for d := range int64(1005) {
		bm, st := 0.1, domain.InsightStats{}
		if d < 5 {
			bm, st = 10, domain.InsightStats{Helped: 9, CreditHelped: 9}
		}
		w.matches = append(w.matches, domain.Match{Doc: d, BM25: bm})
		w.cands[d] = domain.Candidate{Insight: domain.Insight{ID: fmt.Sprintf("i-%04d", d), CreatedAt: now, Stats: st}, BM25: bm}
	}
	loaded := 0
	got, err := domain.RankMatches(domain.RankLearned, w.matches, func(dst []domain.Candidate, ms []domain.Match) ([]domain.Candidate, error) {
		loaded += len(ms)
		for _, m := range ms {
			dst = append(dst, w.cands[m.Doc])
		}
		return dst, nil
	}, now, 5)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"i-0004", "i-0003", "i-0002", "i-0001", "i-0000"}, func() (out []string) {
		for _, r := range got {
			out = append(out, r.Insight.ID)
		}
		return out
	}()); diff != "" {
		t.Errorf("clear top (-want +got):\n%s", diff)
	}
	if loaded != 20 {
		t.Errorf("clear top: loaded %d matches, want the first batch of 20", loaded)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestUse: a constraint is proven advice about this situation; proven
// advice about another is context, and a quarantined insight never
// constrains however it scores.
func TestUse(t *testing.T) {
	proven, quarantined := domain.Insight{Type: domain.InsightFact}, domain.Insight{Type: domain.InsightFact, Label: domain.Untrusted("a web page")}
	for _, tc := range []struct {
		name string
		r    domain.Ranked
		want domain.InsightUse
	}{
		{"proven and relevant", domain.Ranked{Insight: proven, Effectiveness: 0.8, Relevance: 0.9}, domain.UseConstraint},
		{"proven, relevant at the setting exactly", domain.Ranked{Insight: proven, Effectiveness: 0.8, Relevance: 0.5}, domain.UseConstraint},
		{"proven but about something else (a credentials fact at 0.42)", domain.Ranked{Insight: proven, Effectiveness: 0.9, Relevance: 0.42}, domain.UseContext},
		{"relevant but unproven", domain.Ranked{Insight: proven, Effectiveness: 0.6, Relevance: 1}, domain.UseContext},
		{"failing", domain.Ranked{Insight: proven, Effectiveness: 0.3, Relevance: 1}, domain.UseRisk},
		{"quarantined never constrains", domain.Ranked{Insight: quarantined, Effectiveness: 0.95, Relevance: 1}, domain.UseUntrusted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.r.Use(0.5); got != tc.want {
				t.Errorf("Use(0.5) = %s, want %s", got, tc.want)
			}
		})
	}
}
