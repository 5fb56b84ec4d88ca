package server

import (
	"context"
	"net/http"
	"runtime/debug"
	"sync/atomic"
	"time"
)

// Idle gives memory back once the server has gone quiet. Under load the
// collector lets the heap grow to GCPercent above what is live, and the
// runtime hands pages back to the OS only slowly; a burst of requests
// would otherwise leave the server holding its peak for minutes. Once no
// request has started for Quiet, Idle collects and returns every free
// page (debug.FreeOSMemory) and then calls Release, which serve points
// at the C allocator's (malloc_trim, for SQLite's freed memory) and at
// its binary's pages (unmapCode). It does so once per quiet spell: a
// server that stays idle pays nothing more.
type Idle struct {
	// Quiet is how long no request must start before memory is given
	// back; DefaultQuiet when zero.
	Quiet time.Duration
	// Release, when set, runs after the collection.
	Release func()
	// Long is a longer quiet: once no request has started for Long,
	// ReleaseLong runs, once per such spell. It is for what costs
	// something to get back (serve's own code, read from its file again:
	// releaseCode), which a burst's pauses should not pay for. Zero never.
	Long        time.Duration
	ReleaseLong func()

	started atomic.Uint64
}

// DefaultQuiet is a second: long enough that a client's next call in a
// conversation is usually sooner, short enough that a finished burst is
// soon forgotten.
const DefaultQuiet = time.Second

// Wrap counts the requests h serves.
func (i *Idle) Wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i.started.Add(1)
		h.ServeHTTP(w, r)
	})
}

// Run gives memory back after each quiet spell until ctx ends, and once
// at the start, when what serve built to start is garbage.
func (i *Idle) Run(ctx context.Context) {
	quiet := i.Quiet
	if quiet <= 0 {
		quiet = DefaultQuiet
	}
	t := time.NewTicker(quiet)
	defer t.Stop()
	seen, trimmed, long := i.started.Load(), false, false
	var since time.Time // the quiet spell's start, as the ticker saw it
	for {
		var now time.Time
		select {
		case <-ctx.Done():
			return
		case now = <-t.C:
		}
		n := i.started.Load()
		switch {
		case n != seen:
			seen, trimmed, long = n, false, false
			since = now
		case !trimmed:
			i.release()
			trimmed = true
			if since.IsZero() {
				since = now.Add(-quiet)
			}
		case !long && i.Long > 0 && i.ReleaseLong != nil && now.Sub(since) >= i.Long:
			i.ReleaseLong()
			long = true
		}
	}
}

func (i *Idle) release() {
	debug.FreeOSMemory()
	if i.Release != nil {
		i.Release()
	}
}
