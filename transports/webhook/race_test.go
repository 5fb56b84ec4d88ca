//go:build race

package webhook_test

// raceEnabled: the race detector slows SQLite-bound tests about fivefold.
const raceEnabled = true
