package server_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
)

// BenchmarkPublishHandler is the server's own cost of a publish: a plain
// JSON-RPC tools/call (as helix-org-load's wire clients send it) handed
// to the server's handler, HTTP request in and JSON answer out, no
// client, no socket. It reports the process's CPU per call (cpu-us/op:
// the handler, group commit, the audit writer, the dispatcher) and
// allocations, which hold whatever else a busy machine runs; with 8
// callers at once the commits are shared as under load.
func BenchmarkPublishHandler(b *testing.B) {
	h := startBench(b)
	servertest.Call[domain.Stream](b, h.Owner(b), "create_stream", map[string]any{"id": "s-bench", "name": "bench"})
	handler := h.Server.Config.Handler
	body := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"publish","arguments":{"stream":"s-bench","body":"hello from the benchmark"}}}`)
	header := plainCallHeader(h.OwnerToken)
	url := h.URL(store.OwnerWorker)
	publish := func(b *testing.B) bool {
		req := httptest.NewRequestWithContext(b.Context(), http.MethodPost, url, bytes.NewReader(body))
		req.Header = header.Clone()
		w := httptest.NewRecorder()
		handler.ServeHTTP(w, req)
		if w.Code != http.StatusOK || !bytes.Contains(w.Body.Bytes(), []byte(`"seq":`)) || bytes.Contains(w.Body.Bytes(), []byte(`"isError":true`)) {
			b.Errorf("publish: %d %s", w.Code, w.Body)
			return false
		}
		return true
	}
	for _, n := range benchClients {
		b.Run(clientsName(n), func(b *testing.B) {
			var next atomic.Int64
			var wg sync.WaitGroup
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cpuTime()
			for range n {
				wg.Go(func() {
					for next.Add(1) <= int64(b.N) && publish(b) {
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(time.Microsecond)/float64(b.N), "cpu-us/op")
		})
	}
}
