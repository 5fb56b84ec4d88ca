package main

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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

// TestUnmapCode: the binary's pages leave the process's resident set,
// recached or not, and the process goes on running its code (read back
// from the file cache), its relocated read-only data intact.
func TestUnmapCode(t *testing.T) {
	for _, recache := range []bool{true, false} {
		t.Run("recache="+strconv.FormatBool(recache), func(t *testing.T) {
			before := rssFileKB(t)
			n, err := unmapCode(recache)
			if err != nil {
				t.Fatal(err)
			}
			after := rssFileKB(t)
			if n < 1<<20 {
				t.Errorf("unmapCode asked for %d bytes of mappings, want the binary's code and data (MBs)", n)
			}
			if after >= before {
				t.Errorf("resident file pages: %d kB before, %d kB after; want fewer after", before, after)
			}
			// Code, constant data and a call through the dynamic loader's
			// tables (cgo's malloc_trim) all still work.
			trimMalloc()
			if got := strings.Repeat("ok", 2); got != "okok" {
				t.Errorf("after unmapCode: %q", got)
			}
			t.Logf("resident file pages: %d kB before, %d kB after, of %d MB mapped", before, after, n>>20)
		})
	}
}

// TestCodeMappings: only the binary's read-only mappings without pages
// of their own are advised, each with its file offset and whether it is
// mapped in huge pages.
func TestCodeMappings(t *testing.T) {
	const smaps = `00400000-00403000 r--p 00000000 fe:00 42 /bin/serve
Rss:                  12 kB
Anonymous:             0 kB
FilePmdMapped:         0 kB
VmFlags: rd mr mw me
00403000-01a18000 r-xp 00003000 fe:00 42 /bin/serve
Rss:               22612 kB
Anonymous:             0 kB
FilePmdMapped:     18432 kB
VmFlags: rd ex mr mw me
032e5000-032e8000 r--p 02ee4000 fe:00 42 /bin/serve
Rss:                  12 kB
Anonymous:            12 kB
FilePmdMapped:         0 kB
VmFlags: rd mr mw me ac
032e8000-033c0000 rw-p 02ee7000 fe:00 42 /bin/serve
Anonymous:             0 kB
FilePmdMapped:         0 kB
VmFlags: rd wr mr mw me ac
7f0000000000-7f0000100000 r-xp 00000000 fe:00 7 /usr/lib/libc.so.6
Anonymous:             0 kB
FilePmdMapped:         0 kB
VmFlags: rd ex mr mw me
7f0000200000-7f0000300000 r-xp 00000000 fe:00 43 /bin/serve (deleted)
Anonymous:             0 kB
FilePmdMapped:         0 kB
VmFlags: rd ex mr mw me
7f0000400000-7f0000500000 rw-p 00000000 00:00 0
Anonymous:          1024 kB
VmFlags: rd wr mr mw me ac
`
	want := []mapping{
		{start: 0x400000, end: 0x403000, offset: 0},
		{start: 0x403000, end: 0x1a18000, offset: 0x3000, huge: true},
	}
	got := codeMappings([]byte(smaps), "/bin/serve")
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(mapping{})); diff != "" {
		t.Errorf("codeMappings (-want +got):\n%s", diff)
	}
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
