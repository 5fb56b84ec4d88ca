package store_test

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkFsync is the disk's limit that every durable commit pays: append
// a small record to a file and fsync it, in a loop. One commit of SQLite in
// WAL mode with synchronous=FULL costs at least one of these, so its
// commits/s can never beat this figure; group commit shares one among
// many writes.
func BenchmarkFsync(b *testing.B) {
	f, err := os.OpenFile(filepath.Join(b.TempDir(), "fsync"), os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	rec := make([]byte, 512)
	for b.Loop() {
		if _, err := f.Write(rec); err != nil {
			b.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "fsyncs/s")
}
