package clitest_test

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/helixml/helix-org/agent/clitest"
)

// TestWriteExecutableRunsAtOnce: each of 300 scripts, written while four
// goroutines start processes without pause, runs as soon as it is
// written. (Written with os.WriteFile, one fails with "text file busy"
// within the first hundred.)
func TestWriteExecutableRunsAtOnce(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for ctx.Err() == nil {
				exec.Command("/bin/true").Run()
			}
		})
	}
	defer wg.Wait()
	defer cancel()
	dir := t.TempDir()
	for i := range 300 {
		path := filepath.Join(dir, fmt.Sprintf("script-%d", i))
		clitest.WriteExecutable(t, path, "#!/bin/sh\nexit 0\n")
		if err := exec.Command(path).Run(); err != nil {
			t.Fatalf("script %d: %v", i, err)
		}
	}
}
