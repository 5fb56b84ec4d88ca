//go:build race

package store_test

// raceEnabled: the race detector makes SQLite-bound Go code several times
// slower; the memory benchmark's claim runs without it (make test).
const raceEnabled = true
