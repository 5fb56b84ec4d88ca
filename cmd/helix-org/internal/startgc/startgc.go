// Package startgc keeps the garbage collector off while the process
// starts. Package initialisation allocates about 4 MB, nearly all of it
// live, which is just past the collector's first goal: without this, a
// collection runs in the middle of start-up and finds nothing to free.
// serve turns it back on once it has answered its first request (or
// soon after it starts listening); every other command as it begins.
//
// The package imports little, so it is initialised before most of the
// packages that allocate (Go initialises, among the packages whose
// imports are ready, the first by import path).
package startgc

import (
	"runtime/debug"
	"sync"
	"time"
)

// Backstop is how long the collector stays off at most, whatever the
// process does: a test binary, or a command that never says it has
// started, still collects.
const Backstop = time.Second

var (
	mu      sync.Mutex
	resumed bool
	// before is the target GOGC gave the runtime (100 without it; -1 for
	// off), returned by turning the collector off.
	before = debug.SetGCPercent(-1)
	timer  *time.Timer
)

func init() { timer = time.AfterFunc(Backstop, Resume) }

// Resume turns the collector back on at the target it had from GOGC,
// unless it is on already.
func Resume() {
	mu.Lock()
	defer mu.Unlock()
	if !resumed {
		resume(before)
	}
}

// ResumeAt turns the collector back on at percent (-1: off), or moves it
// there if it is on already.
func ResumeAt(percent int) {
	mu.Lock()
	defer mu.Unlock()
	resume(percent)
}

func resume(percent int) {
	resumed = true
	timer.Stop()
	debug.SetGCPercent(percent)
}
