package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
)

// build is one binary under comparison, by the label it is printed under.
type build struct{ label, bin string }

// parseBuilds reads -compare's label=path,label=path.
func parseBuilds(s string) ([]build, error) {
	var out []build
	for part := range strings.SplitSeq(s, ",") {
		label, bin, ok := strings.Cut(part, "=")
		if !ok || label == "" || bin == "" {
			return nil, fmt.Errorf("-compare: %q is not label=path (e.g. base=/tmp/base/helix-org,head=bin/helix-org)", part)
		}
		if _, err := os.Stat(bin); err != nil {
			return nil, fmt.Errorf("-compare: %s: %w", label, err)
		}
		out = append(out, build{label, bin})
	}
	if len(out) < 1 {
		return nil, errors.New("-compare: no binaries")
	}
	return out, nil
}

// figure is one number a round measures of a build.
type figure struct {
	name, unit string
	// higher is better (rates), else lower is (times, memory).
	higher bool
}

// figures are what the comparison prints, in order.
var figures = []figure{
	{"cold start, empty database", "ms", false},
	{"cold start, big database", "ms", false},
	{"idle RSS, big database", "MB", false},
	{"  of which the binary's pages", "MB", false},
	{"idle RSS, big database, long idle", "MB", false},
	{"  of which the binary's pages", "MB", false},
	{"read_events limit 20, 1 client", "/s", true},
	{"read_events limit 20, 8 clients", "/s", true},
	{"read_events limit 20, 8 clients p99", "ms", false},
	{"publish, 8 sdk clients", "/s", true},
	{"publish, 8 sdk clients p99", "ms", false},
	{"RSS as the publish run ends", "MB", false},
	{"RSS after the publish run, quiet", "MB", false},
	{"  of which the binary's pages", "MB", false},
	{"publish, 8 wire clients", "/s", true},
	{"publish, 8 wire clients p99", "ms", false},
	{"webhooks, 16 senders", "/s", true},
	{"webhooks, 16 senders p99", "ms", false},
	{"RSS after all the loads, long quiet", "MB", false},
	{"  of which the binary's pages", "MB", false},
	{"RSS, the server that seeded it, quiet", "MB", false},
}

// Indexes into figures.
const (
	fColdEmpty = iota
	fColdBig
	fIdleBig
	fIdleBigFile
	fIdleLong
	fIdleLongFile
	fRead1
	fRead8
	fRead8p99
	fPublishSDK
	fPublishSDKp99
	fRSSPublishEnd
	fRSSPublishQuiet
	fRSSPublishFile
	fPublishWire
	fPublishWirep99
	fWebhooks
	fWebhooksp99
	fRSSLoadsLong
	fRSSLoadsLongFile
	fSeeded
)

// quiet is how long a server is left alone before a "quiet" memory
// figure is read: past serve's own quiet spell (server.DefaultQuiet),
// after which it gives memory back.
const quiet = 2500 * time.Millisecond

// measures is one round's figures of one build, by index in figures.
type measures map[int]float64

// compare runs cfg.Rounds rounds over cfg.Builds, interleaved (each round
// every build in turn, the order alternating), and prints each figure's
// median per build side by side with the machine's load.
func compare(ctx context.Context, cfg config, out io.Writer) error {
	builds, err := parseBuilds(cfg.Compare)
	if err != nil {
		return err
	}
	root, err := os.MkdirTemp("", "helix-org-compare-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	fmt.Fprintf(out, "compare: %d rounds interleaved on %d cores; big database: %d AI workers, %d events\n", cfg.Rounds, runtime.NumCPU(), cfg.BigWorkers, cfg.BigEvents)
	for _, b := range builds {
		fmt.Fprintf(out, "  %s = %s\n", b.label, b.bin)
	}
	// Each build makes its own big database, through its own tools, and
	// the RSS of the server that took those events, once it is quiet, is
	// a figure of its own.
	big, seeded, tokens := map[string]string{}, map[string]float64{}, map[string]string{}
	for _, b := range builds {
		start := time.Now()
		big[b.label] = filepath.Join(root, "big-"+b.label)
		tok, rss, err := seedBig(ctx, b.bin, big[b.label], cfg)
		if err != nil {
			return fmt.Errorf("seed with %s: %w", b.label, err)
		}
		tokens[b.label], seeded[b.label] = tok, rss
		fmt.Fprintf(out, "seeded %s's big database in %s; quiet, that server held %.1f MB\n", b.label, time.Since(start).Round(time.Second), rss)
	}
	all := map[string][]measures{}
	var loads []float64
	for r := range cfg.Rounds {
		order := slices.Clone(builds)
		if r%2 == 1 {
			slices.Reverse(order)
		}
		for _, b := range order {
			load1 := loadAvg()
			loads = append(loads, load1)
			m, err := round(ctx, b.bin, filepath.Join(root, fmt.Sprintf("r%d-%s", r, b.label)), big[b.label], tokens[b.label], cfg)
			if err != nil {
				return fmt.Errorf("round %d, %s: %w", r+1, b.label, err)
			}
			m[fSeeded] = seeded[b.label]
			all[b.label] = append(all[b.label], m)
			fmt.Fprintf(out, "round %d %-6s load %.2f: cold %.1f/%.1f ms, idle %.1f MB, read %.0f/%.0f/s, publish %.0f/s, rss %.1f MB, webhooks %.0f/s\n",
				r+1, b.label, load1, m[fColdEmpty], m[fColdBig], m[fIdleBig], m[fRead1], m[fRead8],
				m[fPublishSDK], m[fRSSPublishEnd], m[fWebhooks])
		}
	}
	if cfg.LongIdle > 0 {
		for _, b := range builds {
			m, err := longQuiet(ctx, b.bin, filepath.Join(root, "long-"+b.label), big[b.label], tokens[b.label], cfg)
			if err != nil {
				return fmt.Errorf("long quiet, %s: %w", b.label, err)
			}
			fmt.Fprintf(out, "long quiet %-6s: after the loads %.1f MB, idle %.1f MB\n", b.label, m[fRSSLoadsLong], m[fIdleLong])
			for _, r := range all[b.label] {
				maps.Copy(r, m)
			}
		}
	}
	printMedians(out, builds, all, loads)
	return nil
}

// round measures one build once: a fresh database's cold start, its
// reads, writes and memory, then a cold start and idle memory on the big
// database.
func round(ctx context.Context, bin, dir, bigDir, bigToken string, cfg config) (measures, error) {
	m := measures{}
	defer os.RemoveAll(dir)
	s, err := freshServe(ctx, bin, dir)
	if err != nil {
		return nil, err
	}
	err = loadRound(ctx, s, cfg, m)
	s.stop()
	if err != nil {
		return nil, err
	}
	s, err = startServe(ctx, bin, bigDir, bigToken)
	if err != nil {
		return nil, err
	}
	defer s.stop()
	m[fColdBig] = ms(s.coldStart)
	// Idle: what the server holds with nothing to do, once its start's
	// work is done.
	if err := sleep(ctx, cfg.Idle); err != nil {
		return nil, err
	}
	m[fIdleBig], m[fIdleBigFile], err = s.rssMB()
	return m, err
}

// longQuiet measures one build past serve's long quiet, when it gives
// back its binary's pages too: once all its loads are done, and idle on
// the big database. It runs after every round, since a server that gave
// its pages back leaves the next one started from the binary to read
// them from disk again, which the rounds' figures are not about.
func longQuiet(ctx context.Context, bin, dir, bigDir, bigToken string, cfg config) (measures, error) {
	m := measures{}
	defer os.RemoveAll(dir)
	s, err := freshServe(ctx, bin, dir)
	if err != nil {
		return nil, err
	}
	err = loadRound(ctx, s, cfg, measures{})
	if err == nil {
		err = sleep(ctx, cfg.LongIdle)
	}
	if err == nil {
		m[fRSSLoadsLong], m[fRSSLoadsLongFile], err = s.rssMB()
	}
	s.stop()
	if err != nil {
		return nil, err
	}
	if s, err = startServe(ctx, bin, bigDir, bigToken); err != nil {
		return nil, err
	}
	defer s.stop()
	if err := sleep(ctx, cfg.LongIdle); err != nil {
		return nil, err
	}
	m[fIdleLong], m[fIdleLongFile], err = s.rssMB()
	return m, err
}

// freshServe starts bin on a new database in dir, bootstrapped.
func freshServe(ctx context.Context, bin, dir string) (*served, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	token, err := bootstrap(ctx, bin, dir)
	if err != nil {
		return nil, err
	}
	return startServe(ctx, bin, dir, token)
}

// loadRound runs the fresh database's loads on s.
func loadRound(ctx context.Context, s *served, cfg config, m measures) error {
	m[fColdEmpty] = ms(s.coldStart)
	setup := newWireClient(s.url, s.token)
	for _, st := range []map[string]any{
		{"id": "s-load", "name": "load"}, {"id": "s-read", "name": "read"},
		{"id": "s-hook", "name": "hook", "transport": map[string]any{"kind": "webhook", "config": map[string]any{}}},
	} {
		if err := setup.call(ctx, "create_stream", st); err != nil {
			return err
		}
	}
	if err := setup.call(ctx, "subscribe", map[string]any{"stream": "s-read"}); err != nil {
		return err
	}
	for n := range 20 {
		if err := setup.call(ctx, "publish", map[string]any{"stream": "s-read", "body": fmt.Sprintf("short history %d", n)}); err != nil {
			return err
		}
	}
	read := func(int, int) (string, map[string]any) {
		return "read_events", map[string]any{"streams": []string{"s-read"}, "limit": 20}
	}
	res, err := loadWith(ctx, s, "wire", 1, cfg.Calls*cfg.Clients/2, read)
	if err != nil {
		return err
	}
	m[fRead1] = rate(res)
	if res, err = loadWith(ctx, s, "wire", cfg.Clients, cfg.Calls, read); err != nil {
		return err
	}
	m[fRead8], m[fRead8p99] = rate(res), ms(percentile(res.Latencies, 99))
	publish := func(i, n int) (string, map[string]any) {
		return "publish", map[string]any{"stream": "s-load", "body": fmt.Sprintf("load client %d call %d", i, n)}
	}
	if res, err = loadWith(ctx, s, "sdk", cfg.Clients, cfg.Calls, publish); err != nil {
		return err
	}
	m[fPublishSDK], m[fPublishSDKp99] = rate(res), ms(percentile(res.Latencies, 99))
	if m[fRSSPublishEnd], _, err = s.rssMB(); err != nil {
		return err
	}
	if err := sleep(ctx, quiet); err != nil {
		return err
	}
	if m[fRSSPublishQuiet], m[fRSSPublishFile], err = s.rssMB(); err != nil {
		return err
	}
	if res, err = loadWith(ctx, s, "wire", cfg.Clients, cfg.Calls, publish); err != nil {
		return err
	}
	m[fPublishWire], m[fPublishWirep99] = rate(res), ms(percentile(res.Latencies, 99))
	hooks := make([]caller, 16)
	for i := range hooks {
		hooks[i] = newHookSender(strings.Replace(s.url, "/workers/w-owner/mcp", "/webhooks/s-hook", 1)).send
	}
	res = load(ctx, hooks, cfg.Calls, func(i, n int) (string, map[string]any) {
		return fmt.Sprintf("compare-%d-%d", i, n), map[string]any{"body": fmt.Sprintf(`{"sender":%d,"n":%d,"items":[{"id":1},{"id":2}]}`, i, n)}
	})
	if res.Errors > 0 {
		return fmt.Errorf("webhooks: %d failed, first: %w", res.Errors, res.FirstErr)
	}
	m[fWebhooks], m[fWebhooksp99] = rate(res), ms(percentile(res.Latencies, 99))
	return nil
}

// loadWith runs n clients of a kind on s, each making calls calls.
func loadWith(ctx context.Context, s *served, kind string, n, calls int, call func(i, n int) (string, map[string]any)) (result, error) {
	callers, closeAll, err := clients(ctx, config{URL: s.url, Token: s.token, Clients: n, Client: kind})
	if err != nil {
		return result{}, err
	}
	defer closeAll()
	res := load(ctx, callers, calls, call)
	if res.Errors > 0 {
		name, _ := call(0, 0)
		return res, fmt.Errorf("%s: %d of %d calls failed, first: %w", name, res.Errors, n*calls, res.FirstErr)
	}
	return res, nil
}

// hookSender posts inbound webhooks, as a sender with its own
// connections would.
type hookSender struct {
	url  string
	http *http.Client
}

func newHookSender(url string) *hookSender {
	return &hookSender{url: url, http: &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone(), Timeout: time.Minute}}
}

// send posts args["body"] with id as its webhook-id.
func (h *hookSender) send(ctx context.Context, id string, args map[string]any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, strings.NewReader(args["body"].(string)))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("webhook-id", id)
	resp, err := h.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("webhook: HTTP %d", resp.StatusCode)
	}
	return nil
}

// seedBig makes the big database in dir with bin: BigWorkers AI workers
// (each in a position of its own, following a quiet stream) and BigEvents
// events on a busy stream the owner follows, published by 8 clients. It
// returns the owner's token and the server's RSS once quiet after.
func seedBig(ctx context.Context, bin, dir string, cfg config) (token string, rss float64, err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", 0, err
	}
	if token, err = bootstrap(ctx, bin, dir); err != nil {
		return "", 0, err
	}
	s, err := startServe(ctx, bin, dir, token)
	if err != nil {
		return "", 0, err
	}
	defer s.stop()
	c := newWireClient(s.url, token)
	calls := []toolCall{
		{"create_role", map[string]any{"id": "r-agent", "title": "Agent", "content": strings.Repeat("Answer what comes in on your streams. ", 20)}},
		{"create_stream", map[string]any{"id": "s-busy", "name": "busy"}},
		{"create_stream", map[string]any{"id": "s-team", "name": "team"}},
		{"subscribe", map[string]any{"stream": "s-busy"}},
	}
	for i := range cfg.BigWorkers {
		p, w := fmt.Sprintf("p-agent-%03d", i), fmt.Sprintf("w-agent-%03d", i)
		calls = append(calls,
			toolCall{"create_position", map[string]any{"id": p, "role": "r-agent", "title": "Agent " + p}},
			toolCall{"hire_worker", map[string]any{"id": w, "position": p, "kind": "ai", "name": "Agent " + w}},
			toolCall{"subscribe", map[string]any{"stream": "s-team", "worker": w}})
	}
	for _, call := range calls {
		if err := c.call(ctx, call.name, call.args); err != nil {
			return "", 0, fmt.Errorf("seed: %w", err)
		}
	}
	const writers = 8
	_, err = loadWith(ctx, s, "wire", writers, (cfg.BigEvents+writers-1)/writers, func(i, n int) (string, map[string]any) {
		return "publish", map[string]any{"stream": "s-busy", "body": fmt.Sprintf("event %d of writer %d on the busy stream, with a little **markdown**", n, i)}
	})
	if err == nil {
		err = sleep(ctx, quiet)
	}
	if err == nil {
		rss, _, err = s.rssMB()
	}
	return token, rss, err
}

type toolCall struct {
	name string
	args map[string]any
}

// printMedians prints each figure's median per build, and each build's
// ratio to the first.
func printMedians(out io.Writer, builds []build, all map[string][]measures, loads []float64) {
	fmt.Fprintf(out, "\nmedians of %d rounds\n%-44s", len(all[builds[0].label]), "figure")
	for _, b := range builds {
		fmt.Fprintf(out, " %10s", b.label)
	}
	for _, b := range builds[1:] {
		fmt.Fprintf(out, " %10s", b.label+"/"+builds[0].label)
	}
	fmt.Fprintln(out)
	for fi, f := range figures {
		fmt.Fprintf(out, "%-44s", f.name+" ("+f.unit+")")
		med := make([]float64, len(builds))
		for i, b := range builds {
			var v []float64
			for _, m := range all[b.label] {
				v = append(v, m[fi])
			}
			med[i] = median(v)
			fmt.Fprintf(out, " %10.1f", med[i])
		}
		for i := range builds[1:] {
			better := "    "
			if (med[i+1] > med[0]) == f.higher && med[i+1] != med[0] {
				better = " (+)"
			}
			fmt.Fprintf(out, " %9.2f×%s", med[i+1]/max(med[0], 1e-9), better)
		}
		fmt.Fprintln(out)
	}
	fmt.Fprintf(out, "machine load (1-minute average at each measure's start): min %.2f, median %.2f, max %.2f on %d cores\n",
		slices.Min(loads), median(loads), slices.Max(loads), runtime.NumCPU())
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(v))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func rate(res result) float64 { return float64(len(res.Latencies)) / res.Elapsed.Seconds() }

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// loadAvg is the machine's 1-minute load average, from /proc/loadavg.
func loadAvg() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	var l float64
	fmt.Sscan(string(b), &l)
	return l
}
