//go:build !cgo

package store

// sqliteFull is false without cgo: see unavailable_cgo.go.
func sqliteFull(error) bool { return false }
