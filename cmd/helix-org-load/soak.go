package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// soak holds a steady load on the server at cfg.URL for cfg.Soak — each
// tick one publish, one inbound webhook and one read_events of the newest
// page, cfg.Rate ticks a second over a few connections — and prints, once
// a minute, the server's resident memory, Go heap, goroutines and open
// files from its /metrics (cfg.Metrics, else the server's own with the
// token): what grows under a load that does not. The last line compares the first minute with the last.
func soak(ctx context.Context, cfg config, out io.Writer) error {
	base, _, ok := strings.Cut(cfg.URL, "/workers/")
	if !ok {
		return fmt.Errorf("-url: %q is not a worker's MCP URL (…/workers/<id>/mcp)", cfg.URL)
	}
	setup := newWireClient(cfg.URL, cfg.Token)
	hook := "s-soak-hook"
	if err := ensureStream(ctx, setup.call, cfg.Stream); err != nil {
		return err
	}
	// read_events reads only streams the caller follows; a second
	// subscribe is refused, which is as good.
	setup.call(ctx, "subscribe", map[string]any{"stream": cfg.Stream})
	if setup.call(ctx, "get_stream", map[string]any{"id": hook}) != nil {
		if err := setup.call(ctx, "create_stream", map[string]any{"id": hook, "name": hook, "transport": map[string]any{"kind": "webhook", "config": map[string]any{}}}); err != nil {
			return fmt.Errorf("create webhook stream: %w", err)
		}
	}
	if cfg.Metrics == "" {
		cfg.Metrics = base + "/metrics"
	}
	if cfg.every == 0 {
		cfg.every = time.Minute
	}
	s := &soaker{cfg: cfg, hookURL: base + "/webhooks/" + hook, http: &http.Client{Timeout: time.Minute}}
	ctx, cancel := context.WithTimeout(ctx, cfg.Soak)
	defer cancel()
	fmt.Fprintf(out, "soak: %s against %s, %d ticks/s (publish + webhook + read_events each), %d connections\n", cfg.Soak, base, cfg.Rate, cfg.Clients)
	fmt.Fprintf(out, "%-6s %9s %7s %9s %9s %11s %5s\n", "minute", "calls", "failed", "rss_MB", "heap_MB", "goroutines", "fds")
	first, last, err := s.run(ctx, out)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "soak: rss %.1f → %.1f MB, heap %.1f → %.1f MB, goroutines %.0f → %.0f, fds %.0f → %.0f over %s; %d calls failed in all\n",
		first.rss, last.rss, first.heap, last.heap, first.goroutines, last.goroutines, first.fds, last.fds, cfg.Soak, s.failed.Load())
	if n := s.failed.Load(); n > 0 {
		return fmt.Errorf("%d calls failed, first: %v", n, s.firstErr)
	}
	return nil
}

type soaker struct {
	cfg      config
	hookURL  string
	http     *http.Client
	calls    atomic.Int64
	failed   atomic.Int64
	mu       sync.Mutex
	firstErr error
}

// sample is what one scrape of /metrics said.
type sample struct{ rss, heap, goroutines, fds float64 }

// run drives the ticks and prints a line a minute until ctx ends.
func (s *soaker) run(ctx context.Context, out io.Writer) (first, last sample, err error) {
	ticks := make(chan int, s.cfg.Clients)
	var wg sync.WaitGroup
	for range s.cfg.Clients {
		c := newWireClient(s.cfg.URL, s.cfg.Token)
		wg.Go(func() {
			for n := range ticks {
				s.tick(ctx, c, n)
			}
		})
	}
	every := time.NewTicker(time.Second / time.Duration(s.cfg.Rate))
	minute := time.NewTicker(s.cfg.every)
	defer every.Stop()
	defer minute.Stop()
	n, m, prev := 0, 0, int64(0)
	for ctx.Err() == nil {
		select {
		case <-every.C:
			n++
			select {
			case ticks <- n:
			default: // the server is behind: skip the tick rather than queue it
			}
		case <-minute.C:
			m++
			if last, err = s.scrape(); err != nil {
				break
			}
			if m == 1 {
				first = last
			}
			calls := s.calls.Load()
			fmt.Fprintf(out, "%-6d %9d %7d %9.1f %9.1f %11.0f %5.0f\n", m, calls-prev, s.failed.Load(), last.rss, last.heap, last.goroutines, last.fds)
			prev = calls
		case <-ctx.Done():
		}
		if err != nil {
			break
		}
	}
	close(ticks)
	wg.Wait()
	return first, last, err
}

// tick makes one publish, one webhook delivery and one read.
func (s *soaker) tick(ctx context.Context, c *wireClient, n int) {
	s.record(c.call(ctx, "publish", map[string]any{"stream": s.cfg.Stream, "body": fmt.Sprintf("soak tick %d", n)}))
	body := fmt.Sprintf(`{"tick":%d,"kind":"soak","items":[{"id":1},{"id":2}]}`, n)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.hookURL, strings.NewReader(body))
	if err == nil {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("webhook-id", fmt.Sprintf("soak-%d-%d", time.Now().UnixNano(), n))
		var resp *http.Response
		if resp, err = s.http.Do(req); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				err = fmt.Errorf("webhook: HTTP %d", resp.StatusCode)
			}
		}
	}
	s.record(err)
	s.record(c.call(ctx, "read_events", map[string]any{"streams": []string{s.cfg.Stream}, "limit": 50}))
}

func (s *soaker) record(err error) {
	s.calls.Add(1)
	// A call cut off by the end of the soak is not a failure.
	if err == nil || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return
	}
	if s.failed.Add(1) == 1 {
		s.mu.Lock()
		s.firstErr = err
		s.mu.Unlock()
	}
}

// scrape reads the process and Go collectors' families from /metrics.
func (s *soaker) scrape() (sample, error) {
	req, err := http.NewRequest(http.MethodGet, s.cfg.Metrics, nil)
	if err != nil {
		return sample{}, fmt.Errorf("-metrics: %w", err)
	}
	// The owner's token opens /metrics; a --metrics-addr listener ignores it.
	req.Header.Set("Authorization", "Bearer "+s.cfg.Token)
	resp, err := s.http.Do(req)
	if err != nil {
		return sample{}, fmt.Errorf("-metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return sample{}, fmt.Errorf("-metrics: HTTP %d", resp.StatusCode)
	}
	want := map[string]*float64{}
	var out sample
	want["process_resident_memory_bytes"], want["go_memstats_heap_inuse_bytes"] = &out.rss, &out.heap
	want["go_goroutines"], want["process_open_fds"] = &out.goroutines, &out.fds
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		name, value, ok := bytes.Cut(sc.Bytes(), []byte(" "))
		if p := want[string(name)]; ok && p != nil {
			*p, _ = strconv.ParseFloat(string(value), 64)
		}
	}
	out.rss, out.heap = out.rss/(1<<20), out.heap/(1<<20)
	return out, sc.Err()
}
