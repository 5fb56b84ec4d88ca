package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/store"
)

// result is what one load run measured.
type result struct {
	Latencies []time.Duration // successful calls, sorted
	Errors    int
	Elapsed   time.Duration
	FirstErr  error
}

// run loads the server at -url, or else one started in-process with group
// commit and then with a commit per write, and prints the disk's fsync
// rate beside them.
func run(ctx context.Context, cfg config, out io.Writer) error {
	if cfg.Soak > 0 {
		return soak(ctx, cfg, out)
	}
	if cfg.Compare != "" {
		return compare(ctx, cfg, out)
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	if cfg.URL != "" {
		return runAgainst(ctx, cfg, cfg.URL+" (-url)", nil, out)
	}
	for i, mode := range commitModes {
		srv, err := startServer(ctx, mode.opts)
		if err != nil {
			return fmt.Errorf("start in-process server: %w", err)
		}
		if i > 0 {
			fmt.Fprintln(out)
		}
		c := cfg
		c.URL, c.Token = srv.url, srv.token
		err = runAgainst(ctx, c, fmt.Sprintf("%s (in-process, fresh database, %s, GOGC=%d)", srv.url, mode.name, srv.gogc), srv.st, out)
		srv.stop()
		if err != nil {
			return err
		}
	}
	rate, err := fsyncRate(os.TempDir(), time.Second)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\nfsync:   %.0f/s on %s (write+fsync loop: one commit per write cannot beat it)\n", rate, os.TempDir())
	return nil
}

// runAgainst loads one server; st, when the server is in-process, tells
// how many writes shared each commit.
func runAgainst(ctx context.Context, cfg config, target string, st *store.Store, out io.Writer) error {
	callers, closeAll, err := clients(ctx, cfg)
	if err != nil {
		return err
	}
	defer closeAll()
	if err := ensureStream(ctx, callers[0], cfg.Stream); err != nil {
		return err
	}
	var writes, commits int64
	if st != nil {
		writes, commits = st.CommitStats()
	}
	cpu0 := cpuTime()
	res := publishLoad(ctx, callers, cfg.Stream, cfg.Calls)
	cpu := cpuTime() - cpu0
	report(out, target, cfg, res)
	if st != nil {
		w, c := st.CommitStats()
		fmt.Fprintf(out, "commits: %d writes in %d commits (%.1f per fsync)\n", w-writes, c-commits, float64(w-writes)/float64(max(1, c-commits)))
		// On a shared machine the rate says how much CPU this process got;
		// the CPU each call cost says what an idle machine would do.
		fmt.Fprintf(out, "cpu:     %.2f ms per call (server and clients), %.0f%% of one core's wall time\n",
			float64(cpu)/float64(time.Millisecond)/float64(max(1, len(res.Latencies))), 100*cpu.Seconds()/res.Elapsed.Seconds())
	}
	if res.Errors > 0 {
		return fmt.Errorf("%d of %d calls failed, first: %w", res.Errors, cfg.Clients*cfg.Calls, res.FirstErr)
	}
	return nil
}

// caller makes one tool call, failing on a tool error.
type caller func(ctx context.Context, name string, args map[string]any) error

// clients are cfg.Clients callers of cfg.Client's kind, and what closes
// them.
func clients(ctx context.Context, cfg config) ([]caller, func(), error) {
	out := make([]caller, 0, cfg.Clients)
	if cfg.Client == "wire" {
		for range cfg.Clients {
			out = append(out, newWireClient(cfg.URL, cfg.Token).call)
		}
		return out, func() {}, nil
	}
	sessions, err := connect(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	for _, cs := range sessions {
		out = append(out, func(ctx context.Context, name string, args map[string]any) error {
			_, err := call(ctx, cs, name, args)
			return err
		})
	}
	return out, func() {
		for _, cs := range sessions {
			cs.Close()
		}
	}, nil
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

func ensureStream(ctx context.Context, call caller, stream string) error {
	if err := call(ctx, "get_stream", map[string]any{"id": stream}); err == nil {
		return nil
	}
	if err := call(ctx, "create_stream", map[string]any{"id": stream, "name": stream}); err != nil {
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

// publishLoad has every client publish calls times, all at once.
func publishLoad(ctx context.Context, callers []caller, stream string, calls int) result {
	return load(ctx, callers, calls, func(i, n int) (string, map[string]any) {
		return "publish", map[string]any{"stream": stream, "body": fmt.Sprintf("load client %d call %d", i, n)}
	})
}

// load has every client make calls calls, all at once, client i's n-th
// call being call(i, n).
func load(ctx context.Context, callers []caller, calls int, call func(i, n int) (string, map[string]any)) result {
	var (
		mu  sync.Mutex
		res result
		wg  sync.WaitGroup
		bad atomic.Int64
	)
	start := time.Now()
	for i, do := range callers {
		wg.Go(func() {
			lat := make([]time.Duration, 0, calls)
			for n := range calls {
				if ctx.Err() != nil {
					break
				}
				t := time.Now()
				name, args := call(i, n)
				if err := do(ctx, name, args); err != nil {
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

// cpuTime is the CPU this process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
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
	fmt.Fprintf(out, "load:    %d %s clients × %d publish calls on %s\n", cfg.Clients, cfg.Client, cfg.Calls, cfg.Stream)
	fmt.Fprintf(out, "calls:   %d ok, %d failed in %s\n", ok, res.Errors, res.Elapsed.Round(time.Millisecond))
	fmt.Fprintf(out, "latency: p50 %.2f ms  p99 %.2f ms  max %.2f ms\n",
		ms(percentile(res.Latencies, 50)), ms(percentile(res.Latencies, 99)), ms(percentile(res.Latencies, 100)))
	fmt.Fprintf(out, "rate:    %.1f calls/s\n", float64(ok)/res.Elapsed.Seconds())
}
