package store_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

// The outcome benchmark (make bench-memory). 30 topics of 10 insights:
// 5 useful (an agent following one succeeds with probability 0.9), 2
// mediocre (0.5) and 3 distractors (0.1). Distractors read closest to the
// topic's query — all four of its words, in a short trigger — useful ones
// hold two of the words among others, mediocre ones one. Each of 500
// activations recalls its topic's top 5, uses them all and reports each
// helped or failed with its hidden probability (fixed seeds). Afterwards
// precision@5 is the share of useful insights in each topic's top 5.
const (
	outcomeTopics      = 30
	outcomeActivations = 500
)

var outcomeKinds = []struct {
	n          int
	usefulness float64
	topicWords int
}{{5, 0.9, 2}, {2, 0.5, 1}, {3, 0.1, 4}}

type outcomeWorld struct {
	st      *store.Store
	clock   *storetest.Clock
	queries []string
	useful  map[string]float64
}

func topicWord(topic, j int) string { return fmt.Sprintf("k%dx%d", topic, j) }

func newOutcomeWorld(tb testing.TB, seed uint64) outcomeWorld {
	tb.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	clock := storetest.NewClock(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC))
	st := storetest.NewWith(tb, store.Options{Now: clock.Now, Synchronous: "OFF"})
	if _, err := st.Bootstrap(tb.Context(), nil); err != nil {
		tb.Fatal(err)
	}
	w := outcomeWorld{st: st, clock: clock, useful: map[string]float64{}}
	filler := func(n int) string {
		var ws []string
		for range n {
			ws = append(ws, fmt.Sprintf("f%d", rng.IntN(400)))
		}
		return strings.Join(ws, " ")
	}
	for topic := range outcomeTopics {
		var words []string
		for j := range 4 {
			words = append(words, topicWord(topic, j))
		}
		w.queries = append(w.queries, strings.Join(words, " "))
		for _, k := range outcomeKinds {
			for range k.n {
				rng.Shuffle(len(words), func(i, j int) { words[i], words[j] = words[j], words[i] })
				trigger := strings.Join(words[:k.topicWords], " ")
				if k.topicWords < 4 {
					trigger += " " + filler(3)
				}
				in, err := st.StoreInsight(tb.Context(), domain.OwnerWorker, domain.Insight{Trigger: trigger, Resolution: filler(4),
					Type: domain.InsightPattern, Scope: domain.ScopeOrg}, 0.6)
				if err != nil {
					tb.Fatal(err)
				}
				w.useful[in.ID] = k.usefulness
			}
		}
	}
	return w
}

// run plays the activations with ranking mode and returns precision@5.
func (w outcomeWorld) run(tb testing.TB, seed uint64, mode domain.RankMode) float64 {
	tb.Helper()
	ctx := tb.Context()
	rng := rand.New(rand.NewPCG(seed, 11))
	for a := range outcomeActivations {
		w.clock.Advance(time.Hour)
		run := fmt.Sprintf("a-%d", a)
		res, err := w.st.Recall(ctx, domain.OwnerWorker, store.RecallQuery{Query: w.queries[rng.IntN(outcomeTopics)], Limit: 5, Mode: mode, Activation: run})
		if err != nil {
			tb.Fatal(err)
		}
		var used, helped, failed []string
		for _, r := range res {
			used = append(used, r.Insight.ID)
			if rng.Float64() < w.useful[r.Insight.ID] {
				helped = append(helped, r.Insight.ID)
			} else {
				failed = append(failed, r.Insight.ID)
			}
		}
		for _, fb := range []struct {
			ids []string
			o   domain.InsightOutcome
		}{{used, domain.OutcomeUtilized}, {helped, domain.OutcomeHelped}, {failed, domain.OutcomeFailed}} {
			if len(fb.ids) == 0 {
				continue
			}
			if err := w.st.InsightFeedback(ctx, domain.OwnerWorker, run, fb.ids, fb.o); err != nil {
				tb.Fatal(err)
			}
		}
	}
	hits, shown := 0, 0
	for _, q := range w.queries {
		res, err := w.st.Recall(ctx, domain.OwnerWorker, store.RecallQuery{Query: q, Limit: 5, Mode: mode})
		if err != nil {
			tb.Fatal(err)
		}
		for _, r := range res {
			shown++
			if w.useful[r.Insight.ID] == 0.9 {
				hits++
			}
		}
	}
	return float64(hits) / float64(shown)
}

func outcomePrecision(tb testing.TB, seed uint64, mode domain.RankMode) float64 {
	return newOutcomeWorld(tb, seed).run(tb, seed, mode)
}

// TestOutcomeLearnedBeatsBaseline is the benchmark's claim on one seed,
// so CI keeps it true: learned ranking reaches 0.8 precision@5 and twice
// the baseline's.
func TestOutcomeLearnedBeatsBaseline(t *testing.T) {
	base := outcomePrecision(t, 1, domain.RankBaseline)
	learned := outcomePrecision(t, 1, domain.RankLearned)
	t.Logf("precision@5 after %d activations: baseline %.3f, learned %.3f", outcomeActivations, base, learned)
	if learned < 0.8 || learned < 2*base {
		t.Errorf("precision@5: learned %.3f, baseline %.3f; want learned ≥ 0.8 and ≥ 2× baseline", learned, base)
	}
}

// BenchmarkMemoryOutcome reports precision@5 of both rankings over five
// seeds (the work is done once, whatever b.N).
func BenchmarkMemoryOutcome(b *testing.B) {
	var sums = map[domain.RankMode]float64{}
	seeds := []uint64{1, 2, 3, 4, 5}
	for b.Loop() {
		clear(sums)
		for _, seed := range seeds {
			line := fmt.Sprintf("seed %d:", seed)
			for _, mode := range []domain.RankMode{domain.RankBaseline, domain.RankLearned} {
				p := outcomePrecision(b, seed, mode)
				sums[mode] += p
				line += fmt.Sprintf(" %s %.3f", mode, p)
			}
			b.Log(line)
		}
	}
	base, learned := sums[domain.RankBaseline]/float64(len(seeds)), sums[domain.RankLearned]/float64(len(seeds))
	b.ReportMetric(base, "p@5_baseline")
	b.ReportMetric(learned, "p@5_learned")
	b.ReportMetric(learned/base, "learned/baseline")
}

// The recall world: 100,000 insights in 1,000 topics of 100. Each insight
// holds four words of its topic (some repeated) and six from a
// 5,000-word vocabulary, and has a scope: 60% the org, 20% one of 10
// roles, 10% one of 50 positions, 10% one of 200 workers, so the reader
// (w-0, in p-0 of r-0) sees about 62% of them and the scope filter has
// work to do. Counters, credit and last use vary as a live org's do.
const (
	recallTopics, recallPerTopic    = 1000, 100
	recallRoles, recallPositions    = 10, 50
	recallWorkers, recallVocabulary = 200, 5000
	recallReader                    = "w-0"
)

func recallVocab(rng *rand.Rand) string { return fmt.Sprintf("v%d", rng.IntN(recallVocabulary)) }

// newRecallWorld imports the recall world of topics topics into st.
func newRecallWorld(tb testing.TB, st *store.Store, topics int) {
	tb.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	now := st.Now()
	_, err := st.Import(tb.Context(), func(im *store.Importer) error {
		for r := range recallRoles {
			if err := im.Role(domain.Role{ID: fmt.Sprintf("r-%d", r), Title: "r", Content: "r"}, ""); err != nil {
				return err
			}
		}
		for p := range recallPositions {
			if err := im.Position(domain.Position{ID: fmt.Sprintf("p-%d", p), RoleID: fmt.Sprintf("r-%d", p%recallRoles), Title: "p"}); err != nil {
				return err
			}
		}
		for w := range recallWorkers {
			if err := im.Worker(domain.Worker{ID: fmt.Sprintf("w-%d", w), Kind: domain.WorkerAI, PositionID: fmt.Sprintf("p-%d", w%recallPositions), Name: "w"}); err != nil {
				return err
			}
		}
		for i := range topics * recallPerTopic {
			topic := i / recallPerTopic
			in := domain.Insight{ID: fmt.Sprintf("i-%d", i), Version: 1, Type: domain.InsightPattern, StoredBy: recallReader,
				Trigger:    fmt.Sprintf("%s %s %s %s", topicWord(topic, rng.IntN(4)), topicWord(topic, rng.IntN(4)), recallVocab(rng), recallVocab(rng)),
				Resolution: fmt.Sprintf("%s %s %s %s %s", topicWord(topic, rng.IntN(4)), recallVocab(rng), recallVocab(rng), recallVocab(rng), recallVocab(rng)),
				CreatedAt:  now.Add(-time.Duration(rng.IntN(90*24)) * time.Hour)}
			switch s := rng.IntN(10); {
			case s < 6:
				in.Scope = domain.ScopeOrg
			case s < 8:
				in.Scope, in.Target = domain.ScopeRole, fmt.Sprintf("r-%d", rng.IntN(recallRoles))
			case s < 9:
				in.Scope, in.Target = domain.ScopePosition, fmt.Sprintf("p-%d", rng.IntN(recallPositions))
			default:
				in.Scope, in.Target = domain.ScopeWorker, fmt.Sprintf("w-%d", rng.IntN(recallWorkers))
			}
			st := &in.Stats
			st.Helped, st.Failed = rng.IntN(4), rng.IntN(4)
			st.CreditHelped, st.CreditFailed = float64(st.Helped)+rng.Float64(), float64(st.Failed)+rng.Float64()
			if rng.IntN(2) == 0 {
				st.LastUsed = now.Add(-time.Duration(rng.IntN(30*24)) * time.Hour)
			}
			if err := im.Insight(in); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
}

// recallQueries are n recalls as a run's trigger reads: a sentence with
// a topic's four words, two vocabulary words and words no insight holds.
func recallQueries(n, topics int) []string {
	rng := rand.New(rand.NewPCG(3, 4))
	out := make([]string, n)
	for i := range out {
		topic := rng.IntN(topics)
		w := []string{topicWord(topic, 0), topicWord(topic, 1), topicWord(topic, 2), topicWord(topic, 3)}
		rng.Shuffle(len(w), func(i, j int) { w[i], w[j] = w[j], w[i] })
		out[i] = fmt.Sprintf("How do we handle %s and %s when the %s %s fails with %s %s?", w[0], w[1], w[2], recallVocab(rng), recallVocab(rng), w[3])
	}
	return out
}

// BenchmarkMemoryRecall100k times recall of the top 5 over the recall
// world, as w-0 sees it, and reports the percentiles of wall time and of
// the process's CPU time per recall (wall time on a shared machine
// measures the neighbours too).
func BenchmarkMemoryRecall100k(b *testing.B) {
	st := storetest.NewWith(b, store.Options{Synchronous: "OFF"})
	newRecallWorld(b, st, recallTopics)
	ctx := b.Context()
	queries := recallQueries(1000, recallTopics)
	var wall, cpu []time.Duration
	n := 0
	for b.Loop() {
		q := queries[n%len(queries)]
		n++
		start, startCPU := time.Now(), processCPU(b)
		res, err := st.Recall(ctx, recallReader, store.RecallQuery{Query: q, Limit: 5})
		if err != nil {
			b.Fatal(err)
		}
		wall, cpu = append(wall, time.Since(start)), append(cpu, processCPU(b)-startCPU)
		if len(res) != 5 {
			b.Fatalf("recall %q: %d results, want 5", q, len(res))
		}
	}
	for _, m := range []struct {
		name string
		d    []time.Duration
	}{{"", wall}, {"cpu_", cpu}} {
		slices.Sort(m.d)
		pct := func(p float64) float64 { return float64(m.d[int(p*float64(len(m.d)-1))]) / 1e6 }
		b.ReportMetric(pct(0.5), m.name+"p50_ms")
		b.ReportMetric(pct(0.95), m.name+"p95_ms")
		b.ReportMetric(pct(0.99), m.name+"p99_ms")
	}
}

// processCPU is the CPU time the process has used: the recall's, on
// whichever threads it ran (the SQLite driver steps rows on a goroutine
// of its own when the context can be cancelled), and its garbage
// collection's.
func processCPU(tb testing.TB) time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
