// Package hugeheap backs the heap a process builds as it starts with
// transparent huge pages. Package initialisation and serve's start and
// first answer leave about 6 MB of heap that is mostly live (startgc
// keeps the collector off meanwhile). Touched a 4 kB page at a time that
// is some 1,300 page faults, and on a virtual machine, where a fault can
// cost 10 µs or more, they are the largest single cost of a cold start.
//
// The package's init grows the heap by 16 MB in one mapping, asks the
// kernel for huge pages there (MADV_HUGEPAGE, honoured when transparent
// huge pages are "madvise" or "always"), and frees it for start-up to
// allocate from: a few 2 MB faults instead. End withdraws the advice once
// the process has started, so that khugepaged never fills out a sparse
// heap later; what the collector frees afterwards is returned to the
// kernel as before, splitting those pages.
//
// It does so only where a page fault is slow. init first times a few
// faults on a scratch mapping: where one costs less than slowFault (a
// machine with a hardware-assisted MMU: 1–2 µs), the collection that
// frees the grown block, and the faults it takes on the binary's data as
// it marks, cost more than the small faults they save, so nothing is
// done; on a paravirtualised MMU (10 µs and more a fault) the huge heap
// halves the time to the first answer.
//
// It imports only runtime, sync and syscall, so it is initialised before the
// packages that allocate (Go initialises, among the packages whose
// imports are ready, the first by import path).
package hugeheap
