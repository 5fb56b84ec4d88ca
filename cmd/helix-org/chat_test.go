package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/helixml/helix-org/agent/clitest"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/tools"
)

// fakeClaudeOnPath puts a `claude` on PATH that runs this test binary as a
// fake Claude Code recording its arguments; it returns the record's path.
func fakeClaudeOnPath(t *testing.T) string {
	t.Helper()
	bin := t.TempDir()
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return writeFakeClaude(t, bin)
}

// writeFakeClaude writes that `claude` into dir. The record's path is in
// the script: agents inherit only an allow-list of the environment.
func writeFakeClaude(t *testing.T, dir string) string {
	t.Helper()
	exe, _ := os.Executable()
	rec := filepath.Join(t.TempDir(), "claude.log")
	script := "#!/bin/sh\nHELIX_ORG_TEST_AGENT=claude FAKE_CLAUDE_LOG=" + rec + " exec " + exe + " \"$@\"\n"
	clitest.WriteExecutable(t, filepath.Join(dir, "claude"), script)
	return rec
}

func bootstrapped(t *testing.T) string {
	t.Helper()
	db := filepath.Join(t.TempDir(), "helix-org.db")
	st, err := store.Open(t.Context(), db, store.Options{Transports: transports.Specs()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Bootstrap(t.Context(), tools.Names()); err != nil {
		t.Fatal(err)
	}
	return db
}

func runCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := newRootCmd()
	var out bytes.Buffer
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetIn(strings.NewReader(""))
	err := cmd.ExecuteContext(t.Context())
	return out.String(), err
}

var sessionFlag = regexp.MustCompile(`--(session-id|resume) (\S+)`)

func TestChatStartsFreshThenResumes(t *testing.T) {
	rec := fakeClaudeOnPath(t)
	db := bootstrapped(t)
	envs := filepath.Join(t.TempDir(), "envs")
	chat := func(extra ...string) (flag, id string) {
		t.Helper()
		if out, err := runCLI(t, append([]string{"chat", "--db", db, "--envs-dir", envs}, extra...)...); err != nil {
			t.Fatalf("chat %v: %v\n%s", extra, err, out)
		}
		data, _ := os.ReadFile(rec)
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		last := lines[len(lines)-1]
		if !strings.Contains(last, "cwd="+filepath.Join(envs, "w-owner", "chat")) || !strings.Contains(last, "--mcp-config mcp.json") ||
			!strings.Contains(last, "--allowedTools mcp__helix-org-w-owner ") {
			t.Errorf("claude ran as %q", last)
		}
		// The chat's server is named after its worker, as in every
		// snippet printed for a person's client, and allowed by that name.
		if cfg, _ := os.ReadFile(filepath.Join(envs, "w-owner", "chat", "mcp.json")); !strings.Contains(string(cfg), `"helix-org-w-owner": {`) {
			t.Errorf("chat mcp.json:\n%s", cfg)
		}
		m := sessionFlag.FindStringSubmatch(last)
		if m == nil {
			t.Fatalf("no session flag in %q", last)
		}
		return m[1], m[2]
	}

	flag, first := chat()
	if flag != "session-id" {
		t.Errorf("first chat used --%s, want a fresh --session-id", flag)
	}
	if flag, id := chat(); flag != "resume" || id != first {
		t.Errorf("second chat: --%s %s, want --resume %s", flag, id, first)
	}
	if flag, id := chat("--new"); flag != "session-id" || id == first {
		t.Errorf("chat --new: --%s %s, want a new --session-id", flag, id)
	}
	if flag, id := chat("--resume", "abc-123"); flag != "resume" || id != "abc-123" {
		t.Errorf("chat --resume abc-123: --%s %s", flag, id)
	}

	// Claude Code got the chat's token in its environment, not in
	// mcp.json, and the token ended with the session.
	data, err := os.ReadFile(filepath.Join(envs, "w-owner", "chat", "mcp.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), store.TokenPrefix) || !strings.Contains(string(data), "${HELIX_ORG_TOKEN}") {
		t.Errorf("chat's mcp.json = %s; want it to refer to ${HELIX_ORG_TOKEN}", data)
	}
	st, err := store.Open(t.Context(), db, store.Options{Transports: transports.Specs()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	log, _ := os.ReadFile(rec)
	tok := regexp.MustCompile(`token=(hxo_[A-Za-z0-9_-]+)`).FindSubmatch(log)
	if tok == nil {
		t.Fatalf("claude ran without HELIX_ORG_TOKEN:\n%s", log)
	}
	if _, err := st.VerifyToken(t.Context(), string(tok[1])); err == nil {
		t.Error("chat token still valid after chat exited")
	}
}

func TestChatWithoutClaudeSaysHowToProceed(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	out, err := runCLI(t, "chat", "--db", bootstrapped(t))
	if err == nil {
		t.Fatal("chat without claude succeeded")
	}
	msg := err.Error() + out
	for _, want := range []string{"Claude Code", "not on PATH", "helix-org token create w-owner"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q: %s", want, msg)
		}
	}
	if strings.Contains(msg, "goroutine") || strings.Contains(msg, "panic") {
		t.Errorf("message looks like a stack trace: %s", msg)
	}
}
