package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/tools"
)

// inProcess is a server this tool started over its own database.
type inProcess struct {
	url, token string
	st         *store.Store
	// gogc is the collector's target in force (server.TuneGC).
	gogc int
	stop func()
}

// commitModes are the store's two ways of committing, loaded one after
// the other in-process: group commit (the default) and a commit per write.
var commitModes = []struct {
	name string
	opts store.Options
}{
	{"group commit", store.Options{}},
	{"a commit per write", store.Options{NoGroupCommit: true}},
}

// startServer serves a fresh bootstrapped database on 127.0.0.1 with the
// production store defaults (synchronous=FULL) changed by opts, and the
// collector's target serve sets (server.TuneGC).
func startServer(ctx context.Context, opts store.Options) (*inProcess, error) {
	gogc := server.TuneGC()
	dir, err := os.MkdirTemp("", "helix-org-load-")
	if err != nil {
		return nil, err
	}
	st, err := store.Open(ctx, filepath.Join(dir, "helix-org.db"), opts)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	cleanup := func() { st.Close(); os.RemoveAll(dir) }
	var token string
	w, err := st.Bootstrap(ctx, tools.Names())
	if err == nil {
		token, err = st.CreateToken(ctx, store.TokenSpec{WorkerID: w.ID, Kind: store.TokenOperator})
	}
	var ln net.Listener
	if err == nil {
		ln, err = net.Listen("tcp", "127.0.0.1:0")
	}
	if err != nil {
		cleanup()
		return nil, err
	}
	hs := &http.Server{Handler: server.New(st, server.Config{})}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintln(os.Stderr, "helix-org-load: serve:", err)
		}
	}()
	stop := func() {
		hs.Shutdown(context.Background())
		<-done
		cleanup()
	}
	return &inProcess{url: domain.MCPURL("http://"+ln.Addr().String(), w.ID), token: token, st: st, gogc: gogc, stop: stop}, nil
}

// fsyncRate appends and fsyncs a small record in a loop in dir for d: the
// disk's limit on commits with synchronous=FULL, which a commit per write
// cannot beat and group commit shares among many writes.
func fsyncRate(dir string, d time.Duration) (float64, error) {
	f, err := os.CreateTemp(dir, "helix-org-load-fsync-")
	if err != nil {
		return 0, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	rec := make([]byte, 512)
	n, start := 0, time.Now()
	for time.Since(start) < d {
		if _, err := f.Write(rec); err != nil {
			return 0, err
		}
		if err := f.Sync(); err != nil {
			return 0, fmt.Errorf("fsync %s: %w", f.Name(), err)
		}
		n++
	}
	return float64(n) / time.Since(start).Seconds(), nil
}
