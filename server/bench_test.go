package server_test

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server"
	"github.com/helixml/helix-org/server/metrics"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
)

// benchClients are the client counts each benchmark runs with: one client
// calling in a loop, and several calling at once over their own sessions.
var benchClients = []int{1, 8}

// commitModes are the store's two ways of committing writes, measured side
// by side: group commit (the default) and one commit per write.
var commitModes = []struct {
	name string
	opts store.Options
}{
	{"group-commit", store.Options{}},
	{"commit-per-write", store.Options{NoGroupCommit: true}},
}

// startBench boots a real server over a store opened with the production
// defaults (synchronous=FULL) and its metrics, with serve's collector
// target (TuneGC), so the numbers are what `helix-org serve` gives.
func startBench(b *testing.B) *servertest.Harness {
	return startBenchWith(b, store.Options{})
}

func startBenchWith(b *testing.B, opts store.Options) *servertest.Harness {
	b.Helper()
	// The target in force comes back once the benchmark ends.
	prev := debug.SetGCPercent(100)
	debug.SetGCPercent(prev)
	b.Cleanup(func() { debug.SetGCPercent(prev) })
	server.TuneGC()
	st, err := store.Open(b.Context(), b.TempDir()+"/helix-org.db", opts)
	if err != nil {
		b.Fatalf("open store: %v", err)
	}
	b.Cleanup(func() { st.Close() })
	m, err := metrics.New(b.Context(), st) // as serve has them
	if err != nil {
		b.Fatal(err)
	}
	return servertest.StartWith(b, st, server.Config{Metrics: m})
}

// BenchmarkPublish measures publish over MCP: one HTTP round trip, one
// write per call, with group commit and with a commit per write
// (store.BenchmarkFsync is the disk's limit on the latter).
func BenchmarkPublish(b *testing.B) {
	params := func(*rand.Rand) *mcp.CallToolParams {
		return &mcp.CallToolParams{Name: "publish", Arguments: map[string]any{"stream": "s-bench", "body": "hello from the benchmark"}}
	}
	for _, mode := range commitModes {
		b.Run(mode.name, func(b *testing.B) {
			h := startBenchWith(b, mode.opts)
			servertest.Call[domain.Stream](b, h.Owner(b), "create_stream", map[string]any{"id": "s-bench", "name": "bench"})
			for _, n := range benchClients {
				b.Run(clientsName(n), func(b *testing.B) {
					writes0, commits0 := h.Store.CommitStats()
					cpu0 := cpuTime()
					runCalls(b, sessions(b, h, n), params)
					b.ReportMetric(float64(cpuTime()-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
					writes, commits := h.Store.CommitStats()
					b.ReportMetric(float64(writes-writes0)/float64(max(1, commits-commits0)), "writes/commit")
				})
			}
		})
	}
}

// BenchmarkReadEvents measures read_events of 50 events from a random
// cursor on a stream of 1,000.
func BenchmarkReadEvents(b *testing.B) {
	const events, limit = 1000, 50
	h := startBench(b)
	owner := h.Owner(b)
	servertest.Call[domain.Stream](b, owner, "create_stream", map[string]any{"id": "s-bench", "name": "bench"})
	servertest.Call[any](b, owner, "subscribe", map[string]any{"stream": "s-bench"}) // a worker reads what it follows
	var first, last int64
	for i := range events {
		ev, err := h.Store.Append(b.Context(), domain.Event{StreamID: "s-bench", Source: store.OwnerWorker,
			Message: domain.Message{From: store.OwnerWorker, Body: fmt.Sprintf("event %d of the benchmark stream", i)}}, store.AppendOptions{})
		if err != nil {
			b.Fatalf("append: %v", err)
		}
		if i == 0 {
			first = ev.Seq
		}
		last = ev.Seq
	}
	// Cursors from just before the first event to limit before the last, so
	// every read returns a full page.
	params := func(r *rand.Rand) *mcp.CallToolParams {
		since := first - 1 + r.Int64N(last-first-limit+2)
		return &mcp.CallToolParams{Name: "read_events", Arguments: map[string]any{"streams": []string{"s-bench"}, "since": since, "limit": limit}}
	}
	for _, n := range benchClients {
		b.Run(clientsName(n), func(b *testing.B) { runCalls(b, sessions(b, h, n), params) })
	}
}

// BenchmarkReadEventsShort measures the read an agent makes most: the
// whole of a short stream (20 events) with limit 20, where the call's
// fixed costs — authentication, the follow check, labels — are most of
// it (issue #35's read_events figure; helix-org-load -compare prints it
// against another build).
func BenchmarkReadEventsShort(b *testing.B) {
	const events, limit = 20, 20
	h := startBench(b)
	owner := h.Owner(b)
	servertest.Call[domain.Stream](b, owner, "create_stream", map[string]any{"id": "s-short", "name": "short"})
	servertest.Call[any](b, owner, "subscribe", map[string]any{"stream": "s-short"})
	for i := range events {
		servertest.Call[any](b, owner, "publish", map[string]any{"stream": "s-short", "body": fmt.Sprintf("short history %d", i)})
	}
	params := func(*rand.Rand) *mcp.CallToolParams {
		return &mcp.CallToolParams{Name: "read_events", Arguments: map[string]any{"streams": []string{"s-short"}, "limit": limit}}
	}
	for _, n := range benchClients {
		b.Run(clientsName(n), func(b *testing.B) { runCalls(b, sessions(b, h, n), params) })
	}
	// The server's own cost of the call, HTTP request in and JSON answer
	// out, without a client or a socket: what each call costs the server
	// in CPU and allocations, whatever else the machine runs.
	b.Run("handler", func(b *testing.B) {
		handler := h.Server.Config.Handler
		body := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"read_events","arguments":{"streams":["s-short"],"limit":20}}}`)
		header := plainCallHeader(h.OwnerToken)
		url := h.URL(store.OwnerWorker)
		// Every answer is the first one, which holds the page.
		var first []byte
		b.ReportAllocs()
		cpu0 := cpuTime()
		for b.Loop() {
			req := httptest.NewRequestWithContext(b.Context(), http.MethodPost, url, bytes.NewReader(body))
			req.Header = header.Clone()
			w := httptest.NewRecorder()
			handler.ServeHTTP(w, req)
			if first == nil {
				first = w.Body.Bytes()
				if !bytes.Contains(first, []byte(`"short history 19"`)) || bytes.Contains(first, []byte(`"isError":true`)) {
					b.Fatalf("read_events: %d %s", w.Code, first)
				}
			}
			if w.Code != http.StatusOK || w.Body.Len() != len(first) {
				b.Fatalf("read_events: %d %s", w.Code, w.Body)
			}
		}
		b.ReportMetric(float64(cpuTime()-cpu0)/float64(time.Microsecond)/float64(b.N), "cpu-us/op")
	})
}

func clientsName(n int) string {
	if n == 1 {
		return "sequential"
	}
	return fmt.Sprintf("clients=%d", n)
}

// sessions connects n independent MCP clients as the owner. They share one
// connection pool big enough for all of them: http.DefaultTransport keeps
// only two idle connections per host, and the churn of fresh TCP
// connections would be measured instead of the server.
func sessions(b *testing.B, h *servertest.Harness, n int) []*mcp.ClientSession {
	b.Helper()
	pool := &http.Transport{MaxIdleConnsPerHost: n}
	b.Cleanup(pool.CloseIdleConnections)
	out := make([]*mcp.ClientSession, n)
	for i := range out {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: fmt.Sprintf("bench-%d", i), Version: "1"}, nil).Connect(b.Context(),
			&mcp.StreamableClientTransport{Endpoint: h.URL(store.OwnerWorker), HTTPClient: &http.Client{Transport: servertest.BearerTransport{Token: h.OwnerToken, Base: pool}}}, nil)
		if err != nil {
			b.Fatalf("client %d: connect: %v", i, err)
		}
		b.Cleanup(func() { cs.Close() })
		out[i] = cs
	}
	return out
}

// runCalls makes b.N tool calls shared out over the sessions, one goroutine
// per session, and reports the latency percentiles and throughput.
func runCalls(b *testing.B, css []*mcp.ClientSession, params func(*rand.Rand) *mcp.CallToolParams) {
	var next atomic.Int64
	lat := make([][]time.Duration, len(css))
	var wg sync.WaitGroup
	b.ResetTimer()
	for i, cs := range css {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(i), 42))
			for next.Add(1) <= int64(b.N) {
				p := params(r)
				start := time.Now()
				res, err := cs.CallTool(b.Context(), p)
				lat[i] = append(lat[i], time.Since(start))
				if err != nil {
					b.Errorf("%s: %v", p.Name, err)
					return
				}
				if res.IsError {
					b.Errorf("%s: tool error: %s", p.Name, servertest.Text(res))
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	reportLatencies(b, slices.Concat(lat...))
}

// cpuTime is the CPU this process has used. Per call it says what the
// server (and its in-process clients) cost whatever share of a busy
// machine the benchmark got.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func reportLatencies(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	ms := func(p int) float64 {
		return float64(lat[min(len(lat)*p/100, len(lat)-1)]) / float64(time.Millisecond)
	}
	b.ReportMetric(ms(50), "p50_ms")
	b.ReportMetric(ms(99), "p99_ms")
	b.ReportMetric(float64(len(lat))/b.Elapsed().Seconds(), "calls/s")
}

// BenchmarkToolsList measures the owner's tools/list over loopback, as it
// is shown by default (find_tools and the compact core) and whole (tool
// search off): as plain JSON-RPC POSTs (the server's own time, and the
// bytes a client reads), and through a go-sdk client, which also decodes
// every schema. Run it with -benchtime 200x for the p50 the issue asks of
// it (≤ 1 ms).
func BenchmarkToolsList(b *testing.B) {
	h := startBench(b)
	url := h.URL(store.OwnerWorker)
	for _, list := range []struct{ name, search string }{{"core", ""}, {"every-tool", "off"}} {
		header := http.Header{}
		if list.search != "" {
			header.Set(domain.ToolSearchHeader, list.search)
		}
		b.Run("plain-post/"+list.name, func(b *testing.B) {
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
			b.Cleanup(client.CloseIdleConnections)
			body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
			var lat []time.Duration
			var size int64
			for b.Loop() {
				req, err := http.NewRequestWithContext(b.Context(), http.MethodPost, url, bytes.NewReader(body))
				if err != nil {
					b.Fatal(err)
				}
				req.Header = header.Clone()
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("Authorization", "Bearer "+h.OwnerToken)
				req.Header.Set("MCP-Protocol-Version", "2025-11-25")
				start := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				size, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				lat = append(lat, time.Since(start))
				if err != nil || resp.StatusCode != http.StatusOK {
					b.Fatalf("tools/list: %d %v", resp.StatusCode, err)
				}
			}
			b.ReportMetric(float64(size), "bytes")
			reportLatencies(b, lat)
		})
		b.Run("go-sdk/"+list.name, func(b *testing.B) {
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(b.Context(),
				&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: servertest.BearerTransport{Token: h.OwnerToken, Header: header}}}, nil)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { cs.Close() })
			var lat []time.Duration
			for b.Loop() {
				start := time.Now()
				res, err := cs.ListTools(b.Context(), nil)
				lat = append(lat, time.Since(start))
				if err != nil || len(res.Tools) == 0 {
					b.Fatalf("tools/list: %v", err)
				}
			}
			reportLatencies(b, lat)
		})
	}
}

// plainCallHeader is the header helix-org-load's plain clients post a
// tools/call with.
func plainCallHeader(token string) http.Header {
	return http.Header{
		"Authorization":        {"Bearer " + token},
		"Content-Type":         {"application/json"},
		"Accept":               {"application/json, text/event-stream"},
		"Mcp-Protocol-Version": {"2025-11-25"},
	}
}

// BenchmarkLongPollWake measures how soon a reader parked in
// read_events(wait=10) answers once another client calls publish: the
// publish's round trip and the wake-up (p50_ms, p99_ms; the reader often
// answers before the publish's own answer is back).
func BenchmarkLongPollWake(b *testing.B) {
	h := startBench(b)
	reader := h.Owner(b)
	writer := sessions(b, h, 1)[0]
	servertest.Call[domain.Stream](b, reader, "create_stream", map[string]any{"id": "s-wake", "name": "wake"})
	servertest.Call[any](b, reader, "subscribe", map[string]any{"stream": "s-wake"})
	type answer struct {
		err  error
		done time.Time
	}
	var since int64
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		got := make(chan answer, 1)
		go func() {
			res, err := reader.CallTool(b.Context(), &mcp.CallToolParams{Name: "read_events",
				Arguments: map[string]any{"streams": []string{"s-wake"}, "since": since, "wait": 10}})
			if err == nil && res.IsError {
				err = fmt.Errorf("tool error: %s", servertest.Text(res))
			}
			got <- answer{err, time.Now()}
		}()
		b.StopTimer()
		waitUntilParked(b) // a publish before it would be found by the first read
		b.StartTimer()
		publishing := time.Now()
		ev := servertest.Call[domain.Event](b, writer, "publish", map[string]any{"stream": "s-wake", "body": "wake up"})
		a := <-got
		if a.err != nil {
			b.Fatalf("read_events: %v", a.err)
		}
		lat = append(lat, a.done.Sub(publishing))
		since = ev.Seq
	}
	b.StopTimer()
	slices.Sort(lat)
	ms := func(p int) float64 { return float64(lat[min(len(lat)*p/100, len(lat)-1)]) / float64(time.Millisecond) }
	b.ReportMetric(ms(50), "p50_ms")
	b.ReportMetric(ms(99), "p99_ms")
}
