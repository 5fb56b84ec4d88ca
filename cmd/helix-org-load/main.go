// Command helix-org-load drives a helix-org server with concurrent MCP
// clients publishing to one stream, and prints latency percentiles and
// throughput. Without -url it starts its own server in-process on a
// throwaway database, twice — with group commit and with a commit per
// write — and prints the disk's fsync rate beside them. It only ever
// targets loopback addresses.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg, err := parseFlags(os.Args[1:], os.Stderr)
	if err == nil {
		err = profiled(cfg.CPUProfile, func() error { return run(ctx, cfg, os.Stdout) })
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "helix-org-load:", err)
		os.Exit(1)
	}
}

// profiled runs fn, writing a CPU profile of it to path when path is set.
func profiled(path string, fn func() error) error {
	if path == "" {
		return fn()
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("-cpuprofile: %w", err)
	}
	defer f.Close()
	if err := pprof.StartCPUProfile(f); err != nil {
		return fmt.Errorf("-cpuprofile: %w", err)
	}
	defer pprof.StopCPUProfile()
	return fn()
}
