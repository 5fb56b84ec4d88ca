package hugeheap

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

// vmFlags is the kernel's VmFlags for the mapping that holds addr.
func vmFlags(t *testing.T, addr uintptr) []string {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x ", &lo, &hi); n == 2 {
			in = lo <= addr && addr < hi
			continue
		}
		if rest, ok := strings.CutPrefix(line, "VmFlags:"); ok && in {
			return strings.Fields(rest)
		}
	}
	t.Fatalf("no mapping holds %#x", addr)
	return nil
}

// The heap start-up allocates in is advised huge from init until End,
// and not after. Where faults are fast init leaves the heap alone, so
// the test starts the huge heap itself.
func TestAdviceLastsUntilEnd(t *testing.T) {
	if base == 0 {
		start()
	}
	if flags := vmFlags(t, block); !slices.Contains(flags, "hg") {
		t.Fatalf("start-up's heap at %#x is not advised huge: VmFlags %v", block, flags)
	}
	End()
	End() // a second End does nothing
	if flags := vmFlags(t, block); slices.Contains(flags, "hg") || !slices.Contains(flags, "nh") {
		t.Fatalf("after End, start-up's heap at %#x is still advised huge: VmFlags %v", block, flags)
	}
}

// init's probe measures something: a page fault takes time, and far
// less than a millisecond.
func TestFaultCost(t *testing.T) {
	c := faultCost()
	if c <= 0 || c >= 1_000_000 {
		t.Fatalf("faultCost() = %d ns, want between 0 and 1 ms", c)
	}
	t.Logf("a page fault costs %d ns here; the huge heap starts from %d ns", c, slowFault)
}
