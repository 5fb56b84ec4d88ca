//go:build !fuzzonly

// Left out of make fuzz's binaries (-tags fuzzonly): this file reaches the
// store, whose tree would be compiled again with fuzz instrumentation.

package webhook_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/transports/inbound"
	"github.com/helixml/helix-org/transports/webhook"
	"github.com/helixml/helix-org/transports/webhook/webhooktest"
)

// loadServer is the real server with the webhook route over st, with one
// signed webhook stream s-load.
func loadServer(tb testing.TB, st *store.Store) string {
	tb.Helper()
	ctx := tb.Context()
	if _, err := st.Bootstrap(ctx, []string{"publish"}); err != nil {
		tb.Fatal(err)
	}
	if _, err := st.CreateStream(ctx, "w-owner", domain.Stream{ID: "s-load", Name: "load",
		Transport: domain.Transport{Kind: webhook.Kind, Config: []byte(`{"secret":"` + secret + `"}`)}}); err != nil {
		tb.Fatal(err)
	}
	srv := httptest.NewServer(inbound.Mux(st, nil, nil, webhook.Endpoint(st, nil)))
	tb.Cleanup(srv.Close)
	return srv.URL + "/webhooks/s-load"
}

// load has senders goroutines POST perSender signed webhooks each; every
// dupEvery-th one is sent twice (a sender's retry). It returns each
// request's latency and the wall time.
func load(tb testing.TB, url string, senders, perSender, dupEvery int) ([]time.Duration, time.Duration) {
	tb.Helper()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: senders}}
	defer client.CloseIdleConnections()
	lat := make([][]time.Duration, senders)
	errs := make(chan error, senders)
	var wg sync.WaitGroup
	start := time.Now()
	for s := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perSender {
				body := fmt.Sprintf(`{"sender":%d,"n":%d}`, s, i)
				id := fmt.Sprintf("msg_%d_%d", s, i)
				sends := 1
				if dupEvery > 0 && i%dupEvery == 0 {
					sends = 2
				}
				for range sends {
					t0 := time.Now()
					req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
					req.Header = webhooktest.Sign(secret, id, t0, []byte(body))
					req.Header.Set("Content-Type", "application/json")
					resp, err := client.Do(req)
					if err != nil {
						errs <- err
						return
					}
					io.Copy(io.Discard, resp.Body) // read to the end, so the connection is reused
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						errs <- fmt.Errorf("%s: status %d", id, resp.StatusCode)
						return
					}
					lat[s] = append(lat[s], time.Since(t0))
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	for err := range errs {
		tb.Fatal(err)
	}
	return slices.Concat(lat...), elapsed
}

func percentile(lat []time.Duration, p float64) time.Duration {
	s := slices.Clone(lat)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

// TestInboundLoad: 16 concurrent senders × 2,000 webhooks (with retries
// mixed in) → every body stored exactly once. Under -race or -short (make
// test) it sends an eighth, which still races 16 senders on one stream;
// `make load` runs it in full.
func TestInboundLoad(t *testing.T) {
	senders, per := 16, 2000
	if raceEnabled || testing.Short() {
		per = 250
	}
	st := openLoadStore(t, store.Options{Synchronous: "NORMAL"})
	url := loadServer(t, st)
	lat, elapsed := load(t, url, senders, per, 50)
	t.Logf("%d requests in %s: %.0f req/s, p50 %s, p99 %s", len(lat), elapsed.Round(time.Millisecond),
		float64(len(lat))/elapsed.Seconds(), percentile(lat, 0.50), percentile(lat, 0.99))

	seen := map[string]int{}
	for since := int64(0); ; {
		evs, err := st.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{"s-load"}, Since: since})
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) == 0 {
			break
		}
		for _, ev := range evs {
			seen[ev.Message.Body]++
		}
		since = evs[len(evs)-1].Seq
	}
	if len(seen) != senders*per {
		t.Errorf("stored %d distinct bodies, want %d", len(seen), senders*per)
	}
	for s := range senders {
		for i := range per {
			if n := seen[fmt.Sprintf(`{"sender":%d,"n":%d}`, s, i)]; n != 1 {
				t.Fatalf("sender %d message %d stored %d times", s, i, n)
			}
		}
	}
}

// cpuTime is the CPU this process has used. Per request it says what the
// server (and the senders) cost whatever share of a busy machine the
// benchmark got.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func openLoadStore(tb testing.TB, opts store.Options) *store.Store {
	tb.Helper()
	opts.Transports = transports
	st, err := store.Open(tb.Context(), tb.TempDir()+"/helix-org.db", opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	return st
}

// serveGCPercent is the collector's target `helix-org serve` runs with
// (server.GCPercent): the benchmark's figures are the server's.
const serveGCPercent = 200

// BenchmarkInboundWebhook measures signed inbound webhooks through the real
// server into SQLite from 16 concurrent senders, with the store as `serve`
// opens it (synchronous=FULL, group commit), with a commit per write, and
// as tests open it (NORMAL); with serve's collector target throughout.
// store.BenchmarkFsync is the disk's limit.
func BenchmarkInboundWebhook(b *testing.B) {
	for _, mode := range []struct {
		name string
		opts store.Options
	}{
		{"sync=FULL/group-commit", store.Options{Synchronous: "FULL"}},
		{"sync=FULL/commit-per-write", store.Options{Synchronous: "FULL", NoGroupCommit: true}},
		{"sync=NORMAL/group-commit", store.Options{Synchronous: "NORMAL"}},
	} {
		b.Run(mode.name, func(b *testing.B) {
			// As serve runs (server.GCPercent), unless GOGC says otherwise.
			if _, set := os.LookupEnv("GOGC"); !set {
				defer debug.SetGCPercent(debug.SetGCPercent(serveGCPercent))
			}
			st := openLoadStore(b, mode.opts)
			url := loadServer(b, st)
			const senders = 16
			writes0, commits0 := st.CommitStats()
			cpu0 := cpuTime()
			b.ResetTimer()
			lat, elapsed := load(b, url, senders, max(1, b.N/senders), 0)
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(time.Millisecond)/float64(len(lat)), "cpu-ms/op")
			writes, commits := st.CommitStats()
			b.ReportMetric(float64(writes-writes0)/float64(max(1, commits-commits0)), "writes/commit")
			b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "req/s")
			b.ReportMetric(float64(percentile(lat, 0.50).Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(percentile(lat, 0.99).Microseconds())/1000, "p99-ms")
		})
	}
}
