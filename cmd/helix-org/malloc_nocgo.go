//go:build !cgo

package main

// limitMallocArenas has nothing to limit without cgo.
func limitMallocArenas() int { return 0 }
