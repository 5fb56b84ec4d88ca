package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
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

// unmapCode takes serve's own binary's read-only pages out of its page
// tables (MADV_DONTNEED) and returns how many bytes of mappings it asked
// for; serve calls it at a short quiet. The pages stay in the file cache,
// so what serve runs next maps them back with a minor fault, no disk
// read. Starting touches much code that serving never runs again
// (package init, migrations, the checks at start), but unmapping alone
// would not help: a kernel that caches a file in large folios (up to
// 2 MB) maps a whole folio when any page of it is touched, and an idle
// server's once-a-second work alone maps back some 28 MB of them. So it
// also marks the mappings for small pages (MADV_NOHUGEPAGE; MADV_RANDOM:
// no readahead, which is what makes large folios) and, with recache,
// where it finds the binary mapped in huge pages, reads it into the file
// cache again in small folios (smallFolios).
func unmapCode(recache bool) (int, error) {
	exe, code, err := adviseCode(unix.MADV_NOHUGEPAGE, unix.MADV_RANDOM, unix.MADV_DONTNEED)
	if err == nil && recache && slices.ContainsFunc(code, func(m mapping) bool { return m.huge }) {
		err = smallFolios(exe, code)
	}
	return bytesOf(code), err
}

// smallFolios drops the file ranges of code from the file cache and reads
// them back at once with readahead off, which caches each page as a
// folio of its own: what a process then touches is mapped a page (or the
// kernel's fault-around, 64 kB) at a time, and the next serve started
// from the binary finds it all cached. The kernel keeps any page another
// process maps, or one not yet written back (a binary just built); those
// stay as they were.
func smallFolios(exe string, code []mapping) error {
	f, err := os.Open(exe)
	if err != nil {
		return fmt.Errorf("recache code: %w", err)
	}
	defer f.Close()
	fd := int(f.Fd())
	if err := unix.Fadvise(fd, 0, 0, unix.FADV_RANDOM); err != nil {
		return fmt.Errorf("recache code: fadvise %s: %w", exe, err)
	}
	buf := make([]byte, 256<<10)
	for _, m := range code {
		n := int64(m.end - m.start)
		if err := unix.Fadvise(fd, m.offset, n, unix.FADV_DONTNEED); err != nil {
			return fmt.Errorf("recache code: fadvise %s: %w", exe, err)
		}
		for off := m.offset; off < m.offset+n; off += int64(len(buf)) {
			if _, err := f.ReadAt(buf[:min(int64(len(buf)), m.offset+n-off)], off); err != nil && !errors.Is(err, io.EOF) {
				return fmt.Errorf("recache code: read %s: %w", exe, err)
			}
		}
	}
	return nil
}

// releaseCode asks the kernel to reclaim the pages of serve's own binary
// that it maps read-only (its code and constant data), and returns how
// many bytes of mappings it asked for: unlike unmapCode, the pages leave
// the file cache too, so what serve runs after is read from disk again,
// once, unless another process still maps it. The kernel does this only
// for a file the process owns or may write (MADV_PAGEOUT's rule); for
// any other it does nothing. Serve calls it after codeQuiet.
func releaseCode() (int, error) {
	_, code, err := adviseCode(unix.MADV_PAGEOUT)
	return bytesOf(code), err
}

// adviseCode gives each piece of advice in turn on each mapping of the
// binary that is read-only and holds no page of its own, and returns the
// binary's path and those mappings. A mapping with anonymous pages (the
// GOT and other data the dynamic loader relocated, then made read-only:
// RELRO) would lose them to MADV_DONTNEED and read the file's unrelocated
// bytes instead. A binary replaced on disk since it started is mapped as
// "path (deleted)", matches nothing and is left.
func adviseCode(advice ...int) (string, []mapping, error) {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return "", nil, err
	}
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return exe, nil, err
	}
	code := codeMappings(smaps, exe)
	for i, m := range code {
		for _, a := range advice {
			_, _, errno := unix.Syscall(unix.SYS_MADVISE, uintptr(m.start), uintptr(m.end-m.start), uintptr(a))
			if errno == unix.EINVAL && a == unix.MADV_NOHUGEPAGE {
				continue // a kernel without transparent huge pages has none to refuse
			}
			if errno != 0 {
				return exe, code[:i], fmt.Errorf("release code: madvise(%d) %x-%x: %w", a, m.start, m.end, errno)
			}
		}
	}
	return exe, code, nil
}

// mapping is a range of the binary mapped into the process: addresses,
// the file offset it starts at, and whether any of it is mapped in huge
// pages (FilePmdMapped), which a file cached in large folios is.
type mapping struct {
	start, end uint64
	offset     int64
	huge       bool
}

func bytesOf(code []mapping) int {
	n := 0
	for _, m := range code {
		n += int(m.end - m.start)
	}
	return n
}

// codeMappings reads /proc/self/smaps for the mappings of exe that are
// neither writable nor hold anonymous (copied-on-write) pages.
func codeMappings(smaps []byte, exe string) []mapping {
	var out []mapping
	var cur mapping
	keep, huge := false, false
	sc := bufio.NewScanner(bytes.NewReader(smaps))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) >= 5 && !strings.HasSuffix(f[0], ":"):
			// A mapping's header: start-end perms offset dev inode [path].
			lo, hi, _ := strings.Cut(f[0], "-")
			start, err1 := strconv.ParseUint(lo, 16, 64)
			end, err2 := strconv.ParseUint(hi, 16, 64)
			offset, err3 := strconv.ParseInt(f[2], 16, 64)
			cur, huge = mapping{start: start, end: end, offset: offset}, false
			keep = len(f) == 6 && f[5] == exe && !strings.Contains(f[1], "w") &&
				errors.Join(err1, err2, err3) == nil && end > start
		case !keep || len(f) < 2:
		case f[0] == "FilePmdMapped:":
			huge = f[1] != "0"
		case f[0] == "Anonymous:" && f[1] != "0":
			keep = false
		case f[0] == "VmFlags:": // a mapping's last field
			cur.huge = huge
			out = append(out, cur)
			keep = false
		}
	}
	return out
}
