package store_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

func topicWord(topic, j int) string { return fmt.Sprintf("k%dx%d", topic, j) }

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
// world, as w-0 sees it, hybrid (the default: BM25 and the embeddings'
// cosine) and lexical (BM25 alone), and reports the percentiles of wall
// time and of the process's CPU time per recall (wall time on a shared
// machine measures the neighbours too).
func BenchmarkMemoryRecall100k(b *testing.B) {
	st := storetest.NewWith(b, store.Options{Synchronous: "OFF"})
	newRecallWorld(b, st, recallTopics)
	queries := recallQueries(1000, recallTopics)
	for _, hybrid := range []bool{true, false} {
		name := map[bool]string{true: "hybrid", false: "lexical"}[hybrid]
		b.Run(name, func(b *testing.B) { benchRecall(b, st, queries, hybrid) })
	}
}

func benchRecall(b *testing.B, st *store.Store, queries []string, hybrid bool) {
	ctx := b.Context()
	var wall, cpu []time.Duration
	n := 0
	for b.Loop() {
		q := queries[n%len(queries)]
		n++
		start, startCPU := time.Now(), processCPU(b)
		res, err := st.Recall(ctx, recallReader, store.RecallQuery{Query: q, Limit: 5, Hybrid: hybrid})
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
