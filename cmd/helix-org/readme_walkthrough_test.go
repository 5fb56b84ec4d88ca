package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

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
	os.MkdirAll(filepath.Join(dir, "bin"), 0o755)
	wrapper := fmt.Sprintf("#!/bin/sh\nHELIX_ORG_TEST_MAIN=1 exec %q \"$@\"\n", exe)
	if err := os.WriteFile(filepath.Join(dir, "bin", "helix-org"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}

	cmd := exec.CommandContext(t.Context(), "sh", "-eu", "-c", block)
	cmd.Dir = dir
	// The server's address is the one thing the README's defaults do not
	// give here (make run serves on 127.0.0.1:8080).
	cmd.Env = append(os.Environ(), "HELIX_ORG_URL="+base)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the walkthrough failed: %v\n%s", err, out)
	}
	for _, want := range []string{"source: w-echo", "body: 'echo: hello there'", "inReplyTo: e-"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the walkthrough's last output lacks %q:\n%s", want, out)
		}
	}
}
