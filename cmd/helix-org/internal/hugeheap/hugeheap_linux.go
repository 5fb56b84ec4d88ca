package hugeheap

import (
	"runtime"
	"sync"
	"syscall"
	"unsafe"
)

const (
	// grow is how much heap start-up is given: room for what it
	// allocates, with the collector off, and some to spare.
	grow = 16 << 20
	// arena is the runtime's heap arena on 64-bit Linux: its mappings
	// are aligned to it and never cross it.
	arena = 64 << 20
	// slowFault is the cost of a page fault above which the huge heap
	// pays: measured break-even lies between 2 µs (it costs a cold start
	// 2 ms) and 12 µs (it saves 25 ms).
	slowFault = 4000 // ns
	// probePages is how many faults init times to decide, in
	// probeGroups groups.
	probePages, probeGroups = 16, 4
)

var (
	// base is the start of the arena start-up allocates in, and block
	// the heap init grew it by.
	base, block uintptr
	endOnce     sync.Once
)

func init() {
	if faultCost() >= slowFault {
		start()
	}
}

// faultCost is the time in nanoseconds of the first touch of a page of
// fresh anonymous memory: the mean over the cheapest of probeGroups
// groups of pages, so that a preemption or an interrupt in the middle
// of the probe (a busy machine) does not read as a slow MMU. 0 if it
// cannot be measured.
func faultCost() int64 {
	const page = 4096
	m, err := syscall.Mmap(-1, 0, probePages*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS)
	if err != nil {
		return 0
	}
	defer syscall.Munmap(m)
	const group = probePages / probeGroups * page
	best := int64(-1)
	for g := 0; g < len(m); g += group {
		t0 := monotonic()
		for i := g; i < g+group; i += page {
			m[i] = 1
		}
		if d := monotonic() - t0; best < 0 || d < best {
			best = d
		}
	}
	return best / (probePages / probeGroups)
}

// monotonic is CLOCK_MONOTONIC in nanoseconds, without package time,
// which this package must not import.
func monotonic() int64 {
	var ts syscall.Timespec
	const clockMonotonic = 1
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockMonotonic, uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Nano()
}

// start grows the heap by a block advised huge and frees it for
// start-up's allocations.
func start() {
	p := make([]byte, grow) // never written: no page is touched
	block = uintptr(unsafe.Pointer(unsafe.SliceData(p)))
	base = block &^ (arena - 1)
	// The advice covers what the arena has mapped now, the block just
	// grown and the little before it, as one mapping; the unmapped rest
	// makes madvise say ENOMEM, which is expected.
	advise(syscall.MADV_HUGEPAGE)
	runtime.KeepAlive(p)
	runtime.GC() // frees the block for what start-up allocates next
}

// End withdraws the huge-page advice: the process has started. Later
// calls do nothing.
func End() {
	endOnce.Do(func() {
		if base != 0 {
			advise(syscall.MADV_NOHUGEPAGE)
		}
	})
}

func advise(advice uintptr) {
	syscall.Syscall(syscall.SYS_MADVISE, base, arena, advice)
}
