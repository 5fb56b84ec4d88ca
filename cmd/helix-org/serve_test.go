package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
)

// TestServePortTaken: with the port held, serve --init --bootstrap fails
// naming the process that holds it, and creates, mints and prints nothing.
func TestServePortTaken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	db := tempDB(t)
	out, _, err := run(t, "", "serve", "--init", "--bootstrap", "--addr", addr, "--db", db, "--envs-dir", filepath.Join(t.TempDir(), "envs"))
	raw, _ := os.ReadFile("/proc/self/cmdline")
	self := clip(strings.TrimSpace(strings.ReplaceAll(string(raw), "\x00", " ")), 120)
	want := fmt.Sprintf("listen on %s: the address is in use by pid %d (%s): stop it (kill %d) or choose another address with --addr (or HELIX_ORG_ADDR)",
		addr, os.Getpid(), self, os.Getpid())
	if err == nil || err.Error() != want {
		t.Fatalf("error = %v\nwant    %s", err, want)
	}
	if out != "" {
		t.Errorf("serve printed %q for a server that never started", out)
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Errorf("serve created %s for a server that never started", db)
	}
}

// TestServeMissingDatabase: serve without --init names the path it looked at.
func TestServeMissingDatabase(t *testing.T) {
	db, envs := tempDB(t), filepath.Join(t.TempDir(), "envs")
	_, _, err := run(t, "", "serve", "--addr", "127.0.0.1:0", "--db", db, "--envs-dir", envs)
	want := "no database at " + db + ": run where it is, point --db (or HELIX_ORG_DB) at it, or pass --init to create a new one"
	if err == nil || err.Error() != want {
		t.Errorf("error = %v\nwant    %s", err, want)
	}
	if _, err := os.Stat(envs); !os.IsNotExist(err) {
		t.Errorf("the refused serve created %s", envs)
	}
}

// TestListeningInodes reads a /proc/net/tcp table: only listening
// sockets on the port, at the address asked for or on every address.
func TestListeningInodes(t *testing.T) {
	table := filepath.Join(t.TempDir(), "tcp")
	os.WriteFile(table, []byte(`  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1111 1 0 100 0 0 10 0
   1: 00000000:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 2222 1 0 100 0 0 10 0
   2: 0100007F:1F90 0100007F:D431 01 00000000:00000000 00:00000000 00000000     0        0 3333 1 0 100 0 0 10 0
   3: 0200007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4444 1 0 100 0 0 10 0
   4: 0100007F:1F91 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 5555 1 0 100 0 0 10 0
`), 0o600)
	got := map[string]bool{}
	listeningInodes(table, net.ParseIP("127.0.0.1"), 8080, got)
	if len(got) != 2 || !got["1111"] || !got["2222"] {
		t.Errorf("inodes = %v, want 1111 (127.0.0.1:8080) and 2222 (0.0.0.0:8080)", got)
	}
}

var makeVar = regexp.MustCompile(`\$\(BIN\)`)

// makeRecipe is the command lines of a Makefile target, $(BIN) replaced
// by exe.
func makeRecipe(t *testing.T, target, exe string) [][]string {
	t.Helper()
	f, err := os.Open("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines [][]string
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, target+":"):
			in = true
		case in && strings.HasPrefix(l, "\t"):
			lines = append(lines, strings.Fields(makeVar.ReplaceAllString(l, exe)))
		case in:
			in = false
		}
	}
	if len(lines) == 0 {
		t.Fatalf("no recipe for %s in the Makefile", target)
	}
	return lines
}

// makeRun runs the Makefile's run recipe with this test binary as
// bin/helix-org, in dir with the HELIX_ORG_* defaults pointed there, and
// returns what it printed once the server answers, and a stop function.
func makeRun(t *testing.T, dir string) (out string, stop func()) {
	t.Helper()
	exe, _ := os.Executable()
	recipe := makeRecipe(t, "run", exe)
	env := append(os.Environ(), "HELIX_ORG_TEST_MAIN=1", "HELIX_ORG_ADDR=127.0.0.1:0", "HELIX_ORG_URL=", "HELIX_ORG_DB=", "HELIX_ORG_ENVS_DIR=")
	for i, line := range recipe {
		cmd := exec.Command(line[0], line[1:]...)
		cmd.Dir, cmd.Env = dir, env
		if i < len(recipe)-1 {
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%v: %v\n%s", line, err, b)
			}
			continue
		}
		stdout, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		t.Cleanup(func() { cmd.Process.Kill(); <-done })
		lines := make(chan string)
		go func() {
			defer close(done)
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
			cmd.Wait()
		}()
		var b strings.Builder
		deadline := time.After(30 * time.Second)
		// The Token: line and the one after it, which says how to mint.
		for !regexp.MustCompile(`\nToken:.*\n.*\n`).MatchString(b.String()) {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("make run exited:\n%s", b.String())
				}
				b.WriteString(l + "\n")
			case <-deadline:
				t.Fatalf("make run printed no Token: line in 30s:\n%s", b.String())
			}
		}
		go func() {
			for range lines {
			}
		}()
		return b.String(), func() { cmd.Process.Signal(os.Interrupt); <-done }
	}
	return "", nil
}

var mcpURLLine = regexp.MustCompile(`(?m)^MCP URL:\s+(\S+)$`)

// TestMakeRunTwice: `make run` twice on a fresh checkout's directory. The
// first creates the database and owner and prints a token; the second
// prints none, says how to get one, and the first token still works. One
// long-lived token exists at the end.
func TestMakeRunTwice(t *testing.T) {
	dir := t.TempDir()
	first, stop := makeRun(t, dir)
	tok := printedToken(t, first)
	url := mcpURLLine.FindStringSubmatch(first)[1]
	if _, err := servertest.Dial(t, url, tok); err != nil {
		t.Fatalf("the first run's token on the first server: %v", err)
	}
	stop()

	second, stop := makeRun(t, dir)
	defer stop()
	for _, want := range []string{"Web UI:    http://127.0.0.1:", "Token:     none minted; w-owner's 1 token keeps working (helix-org token list shows it)",
		"mint another with: helix-org bootstrap --new-token [--ttl 24h]  (or: helix-org token create w-owner)"} {
		if !strings.Contains(second, want) {
			t.Errorf("second make run lacks %q:\n%s", want, second)
		}
	}
	if strings.Contains(second, store.TokenPrefix) {
		t.Errorf("second make run printed a token:\n%s", second)
	}
	url = mcpURLLine.FindStringSubmatch(second)[1]
	owner, err := servertest.Dial(t, url, tok)
	if err != nil {
		t.Fatalf("the first run's token on the second server: %v", err)
	}
	servertest.Call[any](t, owner, "list_roles", nil)

	out := mustRun(t, "token", "list", "-o", "json", "--db", filepath.Join(dir, "helix-org.db"))
	var listed struct{ Tokens []store.Token }
	if err := json.Unmarshal([]byte(out), &listed); err != nil {
		t.Fatal(err)
	}
	var forever []string
	for _, tk := range listed.Tokens {
		if tk.ExpiresAt == nil {
			forever = append(forever, tk.Label)
		}
	}
	if len(forever) != 1 || forever[0] != "bootstrap" {
		t.Errorf("tokens without expiry after two runs: %v, want only bootstrap's\n%s", forever, out)
	}
	if tk := listed.Tokens[0]; tk.LastUsedAt == nil {
		t.Errorf("the bootstrap token shows no last use after two connections: %+v", tk)
	}
}
