package store_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

// BenchmarkReadEvents is read_events' store read on one stream holding 1k
// to 1M events: the newest page (a client tailing the stream) and a page
// from the middle by cursor (a client catching up), each the tool's
// default page of store.MaxReadLimit events and a short one. p50-ms and
// p99-ms are one read's latency; the target is a p50 under 2 ms at every
// size, on SQLite and (HELIX_ORG_TEST_DB=postgres) PostgreSQL.
func BenchmarkReadEvents(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000, 1_000_000} {
		st, first := filledStream(b, n)
		plan, err := st.ExplainReadEvents(b.Context(), "s-bench", first+int64(n/2), store.MaxReadLimit)
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("plan at %d events:\n%s", n, plan)
		for _, limit := range []int{50, store.MaxReadLimit} {
			for _, page := range []struct {
				name  string
				since int64
			}{
				{"newest", first + int64(n-limit) - 1},
				{"middle", first + int64(n/2) - 1},
			} {
				b.Run(fmt.Sprintf("events=%d/page=%s/limit=%d", n, page.name, limit), func(b *testing.B) {
					q := store.EventQuery{StreamIDs: []string{"s-bench"}, Since: page.since, Limit: limit}
					lat := make([]time.Duration, 0, b.N)
					for b.Loop() {
						t0 := time.Now()
						evs, err := st.ReadEvents(b.Context(), q)
						lat = append(lat, time.Since(t0))
						if err != nil || len(evs) != limit || evs[0].Seq != page.since+1 {
							b.Fatalf("read %+v: %d events, %v", q, len(evs), err)
						}
					}
					slices.Sort(lat)
					b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
					b.ReportMetric(ms(lat[min(len(lat)-1, len(lat)*99/100)]), "p99-ms")
				})
			}
		}
		st.Close()
	}
}

// filledStream is a store whose stream s-bench holds n events, the first
// with seq first.
func filledStream(b *testing.B, n int) (*store.Store, int64) {
	b.Helper()
	ctx := b.Context()
	st := storetest.New(b)
	if _, err := st.Bootstrap(ctx, nil); err != nil {
		b.Fatal(err)
	}
	if _, err := st.CreateStream(ctx, store.OwnerWorker, domain.Stream{ID: "s-bench", Name: "bench", Transport: domain.Transport{Kind: domain.TransportLocal}}); err != nil {
		b.Fatal(err)
	}
	last, err := st.LastSeq(ctx)
	if err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	if err := st.FillStream(ctx, "s-bench", n); err != nil {
		b.Fatalf("fill %d events: %v", n, err)
	}
	if err := st.Analyze(ctx); err != nil {
		b.Fatal(err)
	}
	b.Logf("%d events stored in %s", n, time.Since(t0).Round(time.Millisecond))
	return st, last + 1
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
