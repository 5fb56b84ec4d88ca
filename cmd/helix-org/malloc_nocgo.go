//go:build !cgo

package main

// limitMallocArenas has nothing to limit without cgo.
func limitMallocArenas() int { return 0 }

// trimMalloc has no C allocator to trim without cgo.
func trimMalloc() {}
