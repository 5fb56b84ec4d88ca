//go:build cgo

package main

// #include <malloc.h>
// static void trim(void) { malloc_trim(0); }
// static int limit_arenas(int n) {
// #ifdef M_ARENA_MAX
// 	return mallopt(M_ARENA_MAX, n);
// #else
// 	return 0;
// #endif
// }
import "C"

import (
	"os"
	"strconv"
)

// mallocArenas is how many malloc arenas serve lets glibc keep. SQLite
// allocates in C on whichever OS thread runs a query, and glibc gives
// threads arenas of their own, up to eight a core, each keeping what it
// freed: resident memory then creeps up under steady load while the Go
// heap stays flat (make soak with 32 connections, 8 minutes on a busy
// 2-core machine: 76 MB at glibc's default, 61 MB with two arenas).
const mallocArenas = 2

// limitMallocArenas sets glibc's arena cap to mallocArenas, unless
// MALLOC_ARENA_MAX says otherwise (glibc read it at start), and returns
// the cap in force; 0 where the C library has no such setting.
func limitMallocArenas() int {
	if v, ok := os.LookupEnv("MALLOC_ARENA_MAX"); ok {
		n, _ := strconv.Atoi(v)
		return n
	}
	if C.limit_arenas(C.int(mallocArenas)) == 0 {
		return 0
	}
	return mallocArenas
}

// trimMalloc returns the C allocator's free memory to the OS: what SQLite
// freed stays in glibc's arenas otherwise.
func trimMalloc() { C.trim() }
