package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// codeQuiet is how long serve must have had no request before it gives
// its binary's pages back (releaseCode): long enough that a conversation's
// pauses never pay for reading code again, short enough that a server
// left idle soon holds only what it still runs.
const codeQuiet = 30 * time.Second

// releaseCode asks the kernel to reclaim the pages of serve's own binary
// that it maps read-only (its code and constant data), and returns how
// many bytes of mappings it asked for. Starting touches much code that
// serving never runs again (package init, migrations, the checks at
// start), and a kernel that caches files in large folios maps a binary
// whole folios at a time, so nearly all of it stays resident. What serve
// runs after comes back from the file as it runs it: read from disk
// again, once, unless another process still maps it. The kernel does
// this only for a file the process owns or may write (MADV_PAGEOUT's
// rule); for any other it does nothing. A binary replaced on disk since
// it started is mapped as "path (deleted)", matches nothing and is left.
func releaseCode() (int, error) {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return 0, err
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return 0, err
	}
	total := 0
	sc := bufio.NewScanner(bytes.NewReader(maps))
	for sc.Scan() {
		// start-end perms offset dev inode path
		f := strings.Fields(sc.Text())
		if len(f) < 6 || f[5] != exe || strings.Contains(f[1], "w") {
			continue
		}
		lo, hi, ok := strings.Cut(f[0], "-")
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if !ok || err1 != nil || err2 != nil || end <= start {
			return total, fmt.Errorf("release code: cannot read the mapping %q", f[0])
		}
		if _, _, errno := unix.Syscall(unix.SYS_MADVISE, uintptr(start), uintptr(end-start), unix.MADV_PAGEOUT); errno != 0 {
			return total, fmt.Errorf("release code: madvise %s: %w", f[0], errno)
		}
		total += int(end - start)
	}
	return total, sc.Err()
}
