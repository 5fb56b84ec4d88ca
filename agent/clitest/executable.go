package clitest

import (
	"os"
	"syscall"
	"testing"
)

// WriteExecutable writes a script or binary that the test runs next. A
// process forked while the file is still open for writing (another test's
// server or agent starting) holds it open until that process execs, and
// running the file meanwhile fails with "text file busy" (ETXTBSY,
// golang/go#22315). Go never forks while ForkLock is held for reading,
// so the file is written under it.
func WriteExecutable(t testing.TB, path, content string) {
	t.Helper()
	syscall.ForkLock.RLock()
	err := os.WriteFile(path, []byte(content), 0o755)
	syscall.ForkLock.RUnlock()
	if err != nil {
		t.Fatal(err)
	}
}
