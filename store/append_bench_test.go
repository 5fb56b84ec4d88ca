package store_test

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

// BenchmarkAppend appends from one writer and from 16 at once, with
// synchronous=FULL as `serve` opens the store, with group commit and with
// a commit per write: the store's own rate, without HTTP or MCP, to set
// beside BenchmarkFsync.
func BenchmarkAppend(b *testing.B) {
	for _, mode := range []struct {
		name string
		opts store.Options
	}{
		{"group-commit", store.Options{}},
		{"commit-per-write", store.Options{NoGroupCommit: true}},
	} {
		for _, writers := range []int{1, 16} {
			b.Run(fmt.Sprintf("%s/writers=%d", mode.name, writers), func(b *testing.B) {
				st, err := store.Open(b.Context(), b.TempDir()+"/helix-org.db", mode.opts)
				if err != nil {
					b.Fatal(err)
				}
				defer st.Close()
				if _, err := st.Bootstrap(b.Context(), nil); err != nil {
					b.Fatal(err)
				}
				if _, err := st.CreateStream(b.Context(), "w-owner", domain.Stream{ID: "s-a", Name: "a", Transport: domain.Transport{Kind: domain.TransportLocal}}); err != nil {
					b.Fatal(err)
				}
				writes0, commits0 := st.CommitStats()
				lat := make([][]time.Duration, writers)
				var next atomic.Int64
				var wg sync.WaitGroup
				cpu0 := cpuTime()
				b.ResetTimer()
				for w := range writers {
					wg.Go(func() {
						for next.Add(1) <= int64(b.N) {
							t0 := time.Now()
							_, err := st.Append(b.Context(), domain.Event{StreamID: "s-a", Source: store.OwnerWorker,
								Message: domain.Message{From: store.OwnerWorker, Body: "hello from the benchmark"}}, store.AppendOptions{})
							if err != nil {
								b.Error(err)
								return
							}
							lat[w] = append(lat[w], time.Since(t0))
						}
					})
				}
				wg.Wait()
				b.StopTimer()
				all := slices.Concat(lat...)
				slices.Sort(all)
				ms := func(p int) float64 { return float64(all[min(len(all)*p/100, len(all)-1)]) / float64(time.Millisecond) }
				writes, commits := st.CommitStats()
				b.ReportMetric(float64(len(all))/b.Elapsed().Seconds(), "appends/s")
				b.ReportMetric(float64(cpuTime()-cpu0)/float64(time.Millisecond)/float64(len(all)), "cpu-ms/op")
				b.ReportMetric(ms(50), "p50_ms")
				b.ReportMetric(ms(99), "p99_ms")
				b.ReportMetric(float64(writes-writes0)/float64(max(1, commits-commits0)), "writes/commit")
			})
		}
	}
}

// cpuTime is the CPU this process has used: per append it says what the
// store costs whatever share of a busy machine the benchmark got.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkAppendWithContacts appends to a stream none of them follow
// with 0 and 1,000 people reachable on a channel: an append looks only at
// the contacts it can concern, so its cost should not grow with them.
func BenchmarkAppendWithContacts(b *testing.B) {
	for _, people := range []int{0, 1_000} {
		b.Run(fmt.Sprintf("contacts=%d", people), func(b *testing.B) {
			st := storetest.NewWith(b, store.Options{Transports: chatTransports})
			ctx := b.Context()
			if _, err := st.Bootstrap(ctx, nil); err != nil {
				b.Fatal(err)
			}
			st.CreateRole(ctx, "w-owner", domain.Role{ID: "r-a", Title: "A", Content: "a"})
			st.CreatePosition(ctx, "w-owner", domain.Position{ID: "p-a", RoleID: "r-a", Title: "A"})
			if _, err := st.CreateStream(ctx, "w-owner", domain.Stream{ID: "s-a", Name: "a", Transport: domain.Transport{Kind: domain.TransportLocal}}); err != nil {
				b.Fatal(err)
			}
			for i := range people {
				id := fmt.Sprintf("w-person-%d", i)
				if _, err := st.HireWorker(ctx, "w-owner", domain.Worker{ID: id, Kind: domain.WorkerHuman, PositionID: "p-a", Name: id}, nil); err != nil {
					b.Fatal(err)
				}
				if _, err := st.SetContact(ctx, "w-owner", id, store.Contact{Kind: string(kindChat), Address: fmt.Sprint(i)}); err != nil {
					b.Fatal(err)
				}
			}
			cpu0 := cpuTime()
			for b.Loop() {
				if _, err := st.Append(ctx, domain.Event{StreamID: "s-a", Source: "w-owner", Message: domain.Message{Body: "hello"}}, store.AppendOptions{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
		})
	}
}
