package metrics

import (
	"bufio"
	"bytes"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"syscall"
)

// goFamilies are the Go runtime's figures, read from runtime/metrics (no
// stop of the world), under the names Prometheus' Go collector gives them
// — but for go_gc_cycles_total, which it names after the runtime metric.
type goFamilies struct{}

var goSamples = []string{
	"/sched/goroutines:goroutines",
	"/sched/gomaxprocs:threads",
	"/memory/classes/heap/objects:bytes",
	"/memory/classes/heap/unused:bytes",
	"/memory/classes/total:bytes",
	"/gc/heap/allocs:bytes",
	"/gc/heap/objects:objects",
	"/gc/cycles/total:gc-cycles",
	"/gc/heap/goal:bytes",
}

func (goFamilies) write(w *bufio.Writer) {
	s := make([]metrics.Sample, len(goSamples))
	for i, name := range goSamples {
		s[i].Name = name
	}
	metrics.Read(s)
	v := func(i int) float64 {
		switch s[i].Value.Kind() {
		case metrics.KindUint64:
			return float64(s[i].Value.Uint64())
		case metrics.KindFloat64:
			return s[i].Value.Float64()
		}
		return 0
	}
	one := func(name, help, typ string, x float64) {
		writeFamily(w, name, help, typ, []sample{{value: x}})
	}
	one("go_goroutines", "Number of goroutines that currently exist.", "gauge", v(0))
	one("go_sched_gomaxprocs_threads", "The current runtime.GOMAXPROCS setting.", "gauge", v(1))
	one("go_memstats_heap_alloc_bytes", "Number of heap bytes allocated and currently in use.", "gauge", v(2))
	one("go_memstats_heap_inuse_bytes", "Number of heap bytes that are in use.", "gauge", v(2)+v(3))
	one("go_memstats_sys_bytes", "Number of bytes obtained from the system.", "gauge", v(4))
	one("go_memstats_alloc_bytes_total", "Total number of bytes allocated, even if freed.", "counter", v(5))
	one("go_memstats_heap_objects", "Number of allocated objects.", "gauge", v(6))
	one("go_gc_cycles_total", "Completed GC cycles.", "counter", v(7))
	one("go_gc_heap_goal_bytes", "Heap size target for the end of the GC cycle.", "gauge", v(8))
	writeFamily(w, "go_info", "Information about the Go environment.", "gauge", []sample{{labels: []string{"version", runtime.Version()}, value: 1}})
}

// processFamilies are the process's CPU, memory and descriptors under the
// names Prometheus' process collector gives them, from /proc (Linux);
// where /proc cannot be read they are left out.
type processFamilies struct{}

// clockTicks is USER_HZ, 100 on every Linux Go supports.
const clockTicks = 100

func (processFamilies) write(w *bufio.Writer) {
	stat, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return
	}
	// Fields after the command, which is in parentheses and may hold spaces.
	f := bytes.Fields(stat[bytes.LastIndexByte(stat, ')')+1:])
	field := func(n int) float64 { // n as proc(5) numbers them
		if n-3 >= len(f) {
			return 0
		}
		x, _ := strconv.ParseFloat(string(f[n-3]), 64)
		return x
	}
	one := func(name, help, typ string, x float64) {
		writeFamily(w, name, help, typ, []sample{{value: x}})
	}
	one("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", "counter", (field(14)+field(15))/clockTicks)
	one("process_virtual_memory_bytes", "Virtual memory size in bytes.", "gauge", field(23))
	one("process_resident_memory_bytes", "Resident memory size in bytes.", "gauge", field(24)*float64(os.Getpagesize()))
	if boot := bootTime(); boot > 0 {
		one("process_start_time_seconds", "Start time of the process since unix epoch in seconds.", "gauge", boot+field(22)/clockTicks)
	}
	if fds, err := os.ReadDir("/proc/self/fd"); err == nil {
		one("process_open_fds", "Number of open file descriptors.", "gauge", float64(len(fds)))
	}
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) == nil {
		one("process_max_fds", "Maximum number of open file descriptors.", "gauge", float64(lim.Cur))
	}
}

// bootTime is the machine's boot, in seconds since the epoch (btime).
func bootTime() float64 {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	for line := range bytes.Lines(b) {
		if v, ok := bytes.CutPrefix(line, []byte("btime ")); ok {
			x, _ := strconv.ParseFloat(string(bytes.TrimSpace(v)), 64)
			return x
		}
	}
	return 0
}
