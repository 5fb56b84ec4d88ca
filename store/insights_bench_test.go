package store_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
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

// BenchmarkMemoryRecall100k times recall over 100,000 insights: 1,000
// topics of 100, each of four topic words and six from a 5,000-word
// vocabulary; queries are a topic's words plus two vocabulary words.
func BenchmarkMemoryRecall100k(b *testing.B) {
	const topics, perTopic = 1000, 100
	rng := rand.New(rand.NewPCG(1, 2))
	st := storetest.NewWith(b, store.Options{Synchronous: "OFF"})
	ctx := b.Context()
	now := st.Now()
	vocab := func() string { return fmt.Sprintf("v%d", rng.IntN(5000)) }
	_, err := st.Import(ctx, func(im *store.Importer) error {
		if err := im.Role(domain.Role{ID: "r-b", Title: "b", Content: "b"}, ""); err != nil {
			return err
		}
		if err := im.Position(domain.Position{ID: "p-b", RoleID: "r-b", Title: "b"}); err != nil {
			return err
		}
		if err := im.Worker(domain.Worker{ID: "w-b", Kind: domain.WorkerAI, PositionID: "p-b", Name: "b"}); err != nil {
			return err
		}
		for i := range topics * perTopic {
			topic := i / perTopic
			trigger := fmt.Sprintf("%s %s %s %s", topicWord(topic, rng.IntN(4)), topicWord(topic, rng.IntN(4)), vocab(), vocab())
			resolution := fmt.Sprintf("%s %s %s %s %s", topicWord(topic, rng.IntN(4)), vocab(), vocab(), vocab(), vocab())
			if err := im.Insight(domain.Insight{ID: fmt.Sprintf("i-%d", i), Version: 1, Trigger: trigger, Resolution: resolution, Type: domain.InsightPattern,
				Scope: domain.ScopeOrg, StoredBy: "w-b", CreatedAt: now, Stats: domain.InsightStats{Helped: rng.IntN(3), Failed: rng.IntN(3)}}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	// Wall time on a shared machine measures the neighbours too, so the
	// thread's CPU time (the recall runs on this goroutine's thread, the
	// SQLite part included) is reported beside it.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var wall, cpu []time.Duration
	for b.Loop() {
		topic := rng.IntN(topics)
		q := fmt.Sprintf("%s %s %s %s %s %s", topicWord(topic, 0), topicWord(topic, 1), topicWord(topic, 2), topicWord(topic, 3), vocab(), vocab())
		start, startCPU := time.Now(), threadCPU(b)
		if _, err := st.Recall(ctx, "w-b", store.RecallQuery{Query: q, Limit: 5}); err != nil {
			b.Fatal(err)
		}
		wall, cpu = append(wall, time.Since(start)), append(cpu, threadCPU(b)-startCPU)
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

// threadCPU is the CPU time the calling thread has used.
func threadCPU(tb testing.TB) time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
