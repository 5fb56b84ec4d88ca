package webhook_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
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
	st := openLoadStore(t, "NORMAL")
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

func openLoadStore(tb testing.TB, sync string) *store.Store {
	tb.Helper()
	st, err := store.Open(tb.Context(), tb.TempDir()+"/helix-org.db", store.Options{Synchronous: sync, Transports: transports})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	return st
}

// BenchmarkInboundWebhook measures signed inbound webhooks through the real
// server into SQLite from 16 concurrent senders, with the store as `serve`
// opens it (synchronous=FULL) and as tests do (NORMAL).
func BenchmarkInboundWebhook(b *testing.B) {
	for _, sync := range []string{"FULL", "NORMAL"} {
		b.Run("sync="+sync, func(b *testing.B) {
			url := loadServer(b, openLoadStore(b, sync))
			const senders = 16
			b.ResetTimer()
			lat, elapsed := load(b, url, senders, max(1, b.N/senders), 0)
			b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "req/s")
			b.ReportMetric(float64(percentile(lat, 0.50).Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(percentile(lat, 0.99).Microseconds())/1000, "p99-ms")
		})
	}
}
