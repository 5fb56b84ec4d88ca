package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// result is what one load run measured.
type result struct {
	Latencies []time.Duration // successful calls, sorted
	Errors    int
	Elapsed   time.Duration
	FirstErr  error
}

func run(ctx context.Context, cfg config, out io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	target := cfg.URL + " (-url)"
	if cfg.URL == "" {
		url, token, stop, err := startServer(ctx)
		if err != nil {
			return fmt.Errorf("start in-process server: %w", err)
		}
		defer stop()
		cfg.URL, cfg.Token, target = url, token, url+" (in-process, fresh database)"
	}
	sessions, err := connect(ctx, cfg)
	if err != nil {
		return err
	}
	defer func() {
		for _, cs := range sessions {
			cs.Close()
		}
	}()
	if err := ensureStream(ctx, sessions[0], cfg.Stream); err != nil {
		return err
	}
	res := publishLoad(ctx, sessions, cfg.Stream, cfg.Calls)
	report(out, target, cfg, res)
	if res.Errors > 0 {
		return fmt.Errorf("%d of %d calls failed, first: %w", res.Errors, cfg.Clients*cfg.Calls, res.FirstErr)
	}
	return nil
}

// connect opens one MCP session per client, each over its own connections.
func connect(ctx context.Context, cfg config) ([]*mcp.ClientSession, error) {
	out := make([]*mcp.ClientSession, 0, cfg.Clients)
	for range cfg.Clients {
		client := mcp.NewClient(&mcp.Implementation{Name: "helix-org-load", Version: "1"}, nil)
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
			Endpoint:   cfg.URL,
			HTTPClient: &http.Client{Transport: bearer{token: cfg.Token, base: http.DefaultTransport.(*http.Transport).Clone()}},
		}, nil)
		if err != nil {
			for _, c := range out {
				c.Close()
			}
			return nil, fmt.Errorf("connect to %s: %w", cfg.URL, err)
		}
		out = append(out, cs)
	}
	return out, nil
}

type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

func ensureStream(ctx context.Context, cs *mcp.ClientSession, stream string) error {
	if _, err := call(ctx, cs, "get_stream", map[string]any{"id": stream}); err == nil {
		return nil
	}
	if _, err := call(ctx, cs, "create_stream", map[string]any{"id": stream, "name": stream}); err != nil {
		return fmt.Errorf("create stream %s: %w", stream, err)
	}
	return nil
}

// call turns a tool error into a Go error.
func call(ctx context.Context, cs *mcp.ClientSession, name string, args map[string]any) (*mcp.CallToolResult, error) {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return nil, err
	}
	if res.IsError {
		var text string
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				text += tc.Text
			}
		}
		return res, fmt.Errorf("%s: %s", name, text)
	}
	return res, nil
}

// publishLoad has every session publish calls times, all at once.
func publishLoad(ctx context.Context, sessions []*mcp.ClientSession, stream string, calls int) result {
	var (
		mu  sync.Mutex
		res result
		wg  sync.WaitGroup
		bad atomic.Int64
	)
	start := time.Now()
	for i, cs := range sessions {
		wg.Go(func() {
			lat := make([]time.Duration, 0, calls)
			for n := range calls {
				if ctx.Err() != nil {
					break
				}
				t := time.Now()
				_, err := call(ctx, cs, "publish", map[string]any{"stream": stream, "body": fmt.Sprintf("load client %d call %d", i, n)})
				if err != nil {
					if bad.Add(1) == 1 {
						mu.Lock()
						res.FirstErr = err
						mu.Unlock()
					}
					continue
				}
				lat = append(lat, time.Since(t))
			}
			mu.Lock()
			res.Latencies = append(res.Latencies, lat...)
			mu.Unlock()
		})
	}
	wg.Wait()
	res.Elapsed = time.Since(start)
	res.Errors = int(bad.Load())
	slices.Sort(res.Latencies)
	return res
}

// percentile of sorted latencies, p in 0–100.
func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)*p/100, len(sorted)-1)]
}

func report(out io.Writer, target string, cfg config, res result) {
	ok := len(res.Latencies)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	fmt.Fprintf(out, "target:  %s\n", target)
	fmt.Fprintf(out, "load:    %d clients × %d publish calls on %s\n", cfg.Clients, cfg.Calls, cfg.Stream)
	fmt.Fprintf(out, "calls:   %d ok, %d failed in %s\n", ok, res.Errors, res.Elapsed.Round(time.Millisecond))
	fmt.Fprintf(out, "latency: p50 %.2f ms  p99 %.2f ms  max %.2f ms\n",
		ms(percentile(res.Latencies, 50)), ms(percentile(res.Latencies, 99)), ms(percentile(res.Latencies, 100)))
	fmt.Fprintf(out, "rate:    %.1f calls/s\n", float64(ok)/res.Elapsed.Seconds())
}
