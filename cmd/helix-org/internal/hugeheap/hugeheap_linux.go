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
)

var (
	// base is the start of the arena start-up allocates in, and block
	// the heap init grew it by.
	base, block uintptr
	endOnce     sync.Once
)

func init() {
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
	endOnce.Do(func() { advise(syscall.MADV_NOHUGEPAGE) })
}

func advise(advice uintptr) {
	syscall.Syscall(syscall.SYS_MADVISE, base, arena, advice)
}
