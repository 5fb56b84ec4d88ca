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

// TuneGC sets the collector's target to GCPercent unless GOGC is set,
// which the runtime has applied already, and returns the target in force
// (-1: off).
func TuneGC() int {
	if v, ok := os.LookupEnv("GOGC"); ok {
		if v == "off" {
			return -1
		}
		if n, err := strconv.Atoi(v); err == nil {
			return n
		}
		return 100 // the runtime ignores a GOGC it cannot read
	}
	debug.SetGCPercent(GCPercent)
	return GCPercent
}
