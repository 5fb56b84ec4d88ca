package main

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestReleaseCode: the binary's read-only mappings are asked for, and the
// pages of it the process holds drop (this test binary is the caller's
// own file, so the kernel takes them).
func TestReleaseCode(t *testing.T) {
	before := rssFileKB(t)
	n, err := releaseCode()
	if err != nil {
		t.Fatal(err)
	}
	after := rssFileKB(t)
	if n < 1<<20 {
		t.Errorf("releaseCode asked for %d bytes of mappings, want the binary's code and data (MBs)", n)
	}
	if after >= before {
		t.Errorf("resident file pages: %d kB before, %d kB after; want fewer after", before, after)
	}
	t.Logf("resident file pages: %d kB before, %d kB after, of %d MB mapped", before, after, n>>20)
}

func rssFileKB(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "RssFile:"); ok {
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no RssFile in /proc/self/status")
	return 0
}
