package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"time"
)

type config struct {
	// URL is a worker's MCP endpoint; empty starts a server in-process.
	URL     string
	Token   string
	Stream  string
	Clients int
	Calls   int
	Timeout time.Duration
	// Client is how the load calls: "sdk" (go-sdk sessions) or "wire"
	// (JSON-RPC posted directly, wire.go).
	Client string
	// CPUProfile, when set, is written with the in-process load's CPU
	// profile (server and clients both), for go tool pprof.
	CPUProfile string
	// Soak, when set, holds a steady load for this long instead (soak.go),
	// Rate ticks a second, printing the server's memory from Metrics.
	Soak    time.Duration
	Rate    int
	Metrics string
	// Compare, when set, runs helix-org serve from each of these binaries
	// (label=path,…) in rounds, interleaved, and prints each figure's
	// median side by side (compare.go): the lean-compare make target.
	Compare    string
	Rounds     int
	BigWorkers int
	BigEvents  int
	Idle       time.Duration
	LongIdle   time.Duration
	// every is how often the soak prints a line: a minute, but in tests.
	every time.Duration
}

func parseFlags(args []string, errOut io.Writer) (config, error) {
	var cfg config
	fs := flag.NewFlagSet("helix-org-load", flag.ContinueOnError)
	fs.SetOutput(errOut)
	fs.StringVar(&cfg.URL, "url", "", "a worker's MCP URL, e.g. http://127.0.0.1:8080/workers/w-owner/mcp; empty starts a server in-process")
	fs.StringVar(&cfg.Token, "token", "", "that worker's bearer token (with -url)")
	fs.StringVar(&cfg.Stream, "stream", "s-load", "stream to publish on; created when missing")
	fs.IntVar(&cfg.Clients, "clients", 8, "concurrent MCP clients")
	fs.IntVar(&cfg.Calls, "calls", 200, "publish calls per client")
	fs.StringVar(&cfg.Client, "client", "sdk", "how clients call: sdk (go-sdk MCP sessions) or wire (JSON-RPC posted directly, no SDK: the server's rate, with little client CPU beside it)")
	fs.StringVar(&cfg.CPUProfile, "cpuprofile", "", "write a CPU profile of the whole run to this file")
	fs.DurationVar(&cfg.Timeout, "timeout", 5*time.Minute, "stop after this long whatever is left")
	fs.DurationVar(&cfg.Soak, "soak", 0, "hold a steady load this long (with -url and -metrics) and print the server's memory, goroutines and fds each minute")
	fs.IntVar(&cfg.Rate, "rate", 20, "with -soak: ticks a second, each a publish, a webhook and a read_events")
	fs.StringVar(&cfg.Metrics, "metrics", "", "with -soak: where the server's metrics are; default its /metrics, read with -token (the owner's)")
	fs.StringVar(&cfg.Compare, "compare", "", "compare helix-org binaries, e.g. base=/tmp/base/helix-org,head=bin/helix-org: each serves in a process of its own, in interleaved rounds, and each figure's median is printed side by side")
	fs.IntVar(&cfg.Rounds, "rounds", 5, "with -compare: rounds per binary")
	fs.IntVar(&cfg.BigWorkers, "big-workers", 100, "with -compare: AI workers in the big database")
	fs.IntVar(&cfg.BigEvents, "big-events", 100_000, "with -compare: events in the big database")
	fs.DurationVar(&cfg.Idle, "idle", 5*time.Second, "with -compare: how long the server idles on the big database before its memory is read")
	fs.DurationVar(&cfg.LongIdle, "long-idle", 35*time.Second, "with -compare: how long the server idles on the big database before its memory is read again, past serve's long quiet (0 skips it)")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	return cfg, cfg.validate()
}

func (c config) validate() error {
	switch {
	case c.Clients < 1 || c.Calls < 1:
		return errors.New("-clients and -calls must be at least 1")
	case c.Compare != "" && (c.Rounds < 1 || c.BigWorkers < 0 || c.BigEvents < 0 || c.Idle < 0 || c.LongIdle < 0):
		return errors.New("-rounds must be at least 1, and -big-workers, -big-events and -idle not negative")
	case c.Client != "sdk" && c.Client != "wire":
		return fmt.Errorf("-client: %q is not a client (valid: sdk, wire)", c.Client)
	case c.Timeout <= 0:
		return errors.New("-timeout must be positive")
	case c.URL != "" && c.Token == "":
		return errors.New("-url needs -token")
	case c.Soak > 0 && c.URL == "":
		return errors.New("-soak needs -url: a server in a process of its own, whose memory it reads")
	case c.Soak > 0 && c.Rate < 1:
		return errors.New("-rate must be at least 1")
	case c.Metrics != "":
		if err := checkLoopback("-metrics", c.Metrics); err != nil {
			return err
		}
		return checkLoopback("-url", c.URL)
	case c.URL != "":
		return checkLoopback("-url", c.URL)
	}
	return nil
}

// checkLoopback refuses any target but this machine: a load generator
// pointed at the wrong host is an attack.
func checkLoopback(flag, raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%s: %w", flag, err)
	}
	host := u.Hostname()
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("%s: %q is not a loopback address (127.0.0.0/8, ::1, localhost)", flag, host)
}
