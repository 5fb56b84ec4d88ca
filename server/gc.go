package server

import (
	"os"
	"runtime/debug"
	"strconv"
)

// GCPercent is the garbage collector's target a server runs with when
// GOGC is not set. A server's live heap is small (tens of MB) while each
// request allocates afresh, so at Go's default of 100 the collector runs
// many times a second and takes about a sixth of the CPU under load; at
// 200 it runs half as often, for some 7 MB more resident memory
// (docs/performance.md).
const GCPercent = 200

// TuneGC sets the collector's target to GCTarget's and returns it.
func TuneGC() int {
	p := GCTarget()
	debug.SetGCPercent(p)
	return p
}

// GCTarget is the collector's target a server runs with (-1: off):
// GOGC's when it is set, else GCPercent.
func GCTarget() int {
	if v, ok := os.LookupEnv("GOGC"); ok {
		if v == "off" {
			return -1
		}
		if n, err := strconv.Atoi(v); err == nil {
			return n
		}
		return 100 // the runtime ignores a GOGC it cannot read
	}
	return GCPercent
}
