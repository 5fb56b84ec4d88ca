package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/helixml/helix-org/agent/clitest"
	"github.com/helixml/helix-org/store"
)

// TestREADMEWalkthrough runs the README's terminal walkthrough exactly as
// written, line by line in sh, against a server on its database, with
// bin/helix-org the real command (this test binary as helix-org): on a
// fresh org with no model configured and no network, it ends with the AI
// worker's reply on the stream.
func TestREADMEWalkthrough(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(readme), "<!-- walkthrough: begin")
	block, _, ok2 := strings.Cut(rest, "<!-- walkthrough: end -->")
	_, block, ok3 := strings.Cut(block, "```sh\n")
	block, _, ok4 := strings.Cut(block, "```")
	if !ok || !ok2 || !ok3 || !ok4 {
		t.Fatal("README.md has no walkthrough block between its markers")
	}

	sh := newDocsShell(t)
	out, err := sh.run(t, block)
	if err != nil {
		t.Fatalf("the walkthrough failed: %v\n%s", err, out)
	}
	for _, want := range []string{"source: w-echo", "body: 'echo: hello there'", "inReplyTo: e-"} {
		if !strings.Contains(out, want) {
			t.Errorf("the walkthrough's last output lacks %q:\n%s", want, out)
		}
	}
}

// docsShell runs shell blocks as a reader of the README and docs/ would:
// in the directory a server serves its database from, with helix-org and
// bin/helix-org the real command (this test binary, as helix-org).
type docsShell struct {
	dir string
	env []string
}

// newDocsShell starts a server on a fresh database in a temp dir.
func newDocsShell(t *testing.T) *docsShell {
	t.Helper()
	dir := t.TempDir()
	st, err := store.Open(t.Context(), filepath.Join(dir, "helix-org.db"), store.Options{Transports: transports.Specs()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	base, _, _ := startServe(t, st, &demoLogBuffer{})
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "bin")
	os.MkdirAll(bin, 0o755)
	wrapper := fmt.Sprintf("#!/bin/sh\nHELIX_ORG_TEST_MAIN=1 exec %q \"$@\"\n", exe)
	clitest.WriteExecutable(t, filepath.Join(bin, "helix-org"), wrapper)
	// Nothing of the caller's helix-org settings (a token, a database)
	// may reach the commands: they get what a fresh `make run` gives, but
	// for the server's address, the one thing its defaults do not give
	// here (make run serves on 127.0.0.1:8080). Under -race a process
	// sleeps a second as it exits (atexit_sleep_ms), which a page of
	// commands would pay once a line.
	env := []string{"HELIX_ORG_URL=" + base, "GORACE=" + strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0")}
	for _, kv := range os.Environ() {
		switch {
		case strings.HasPrefix(kv, "HELIX_ORG_"), strings.HasPrefix(kv, "GORACE="):
		case strings.HasPrefix(kv, "PATH="):
			env = append(env, "PATH="+bin+string(os.PathListSeparator)+strings.TrimPrefix(kv, "PATH="))
		default:
			env = append(env, kv)
		}
	}
	return &docsShell{dir: dir, env: env}
}

// run runs one block with sh -eu, so its first failing line fails it,
// and returns its combined output. A block gets two minutes: the longest
// wait a page shows is a 30 s long-poll.
func (s *docsShell) run(t *testing.T, block string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-eu", "-c", block)
	cmd.Dir, cmd.Env, cmd.WaitDelay = s.dir, s.env, 5*time.Second
	out, err := cmd.CombinedOutput()
	return string(out), err
}
