// Package gittest serves git repositories over smart HTTP on loopback for
// tests: git's own http-backend run as a CGI behind httptest, so clones
// and pushes go through the same protocol as against a real forge.
package gittest

import (
	"fmt"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/helixml/helix-org/store/designdocs"
)

// Serve serves the repositories under root at URL/<name>; push lets
// clients push (receive-pack), which http-backend refuses by default
// without an authenticated user.
func Serve(t *testing.T, root string, push bool) *httptest.Server {
	t.Helper()
	out, err := designdocs.Command(t.Context(), "", "--exec-path").Output()
	if err != nil {
		t.Fatalf("git --exec-path: %v", err)
	}
	env := []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}
	if push {
		env = append(env, "REMOTE_USER=tester")
	}
	h := &cgi.Handler{Path: filepath.Join(strings.TrimSpace(string(out)), "git-http-backend"), Env: env, Stderr: t.Output()}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// Repo makes a repository at dir with one commit on main: a README.
func Repo(t *testing.T, dir string) string {
	t.Helper()
	Git(t, "", "init", "-q", "-b", "main", dir)
	Git(t, dir, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "init")
	return dir
}

// Bare makes a bare clone of src at dir, to serve or push to.
func Bare(t *testing.T, src, dir string) string {
	t.Helper()
	Git(t, "", "-c", "protocol.file.allow=always", "clone", "-q", "--bare", src, dir)
	return dir
}

// Git runs git in dir (none when empty), as the server runs it (no hooks,
// no user config), and returns its trimmed output.
func Git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := designdocs.Command(t.Context(), dir, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// TrapHooks are the hooks Trapped sets: every one git could run when the
// server works in a repository, clones it or pushes into it.
var TrapHooks = []string{"post-checkout", "pre-commit", "prepare-commit-msg", "commit-msg", "post-commit",
	"reference-transaction", "pre-push", "pre-receive", "update", "post-receive", "post-update", "push-to-checkout", "pre-auto-gc"}

// Trapped makes a repository at dir, with a commit on main, whose hooks
// and core.fsmonitor append their names to marker. It first commits with
// hooks and fsmonitor on, as a person's git runs them, and fails unless
// they wrote the marker: a test that finds no marker later means it.
func Trapped(t *testing.T, dir, marker string) string {
	t.Helper()
	Git(t, "", "init", "-q", "-b", "main", dir)
	hooks := filepath.Join(dir, ".git", "hooks")
	for _, h := range TrapHooks {
		script := fmt.Sprintf("#!/bin/sh\necho %s >> '%s'\ncat >/dev/null\nexit 0\n", h, marker)
		if err := os.WriteFile(filepath.Join(hooks, h), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	fsmonitor := filepath.Join(dir, ".git", "fsmonitor.sh")
	if err := os.WriteFile(fsmonitor, []byte(fmt.Sprintf("#!/bin/sh\necho fsmonitor >> '%s'\nexit 1\n", marker)), 0o755); err != nil {
		t.Fatal(err)
	}
	Git(t, dir, "config", "core.fsmonitor", fsmonitor)
	os.WriteFile(filepath.Join(dir, "README"), []byte("hello\n"), 0o644)
	on := []string{"-c", "core.hooksPath=" + hooks, "-c", "core.fsmonitor=" + fsmonitor, "-c", "user.name=t", "-c", "user.email=t@t"}
	Git(t, dir, append(on, "add", "README")...)
	Git(t, dir, append(on, "commit", "-qm", "init")...)
	data, _ := os.ReadFile(marker)
	for _, want := range []string{"fsmonitor", "pre-commit", "post-commit", "reference-transaction"} {
		if !strings.Contains(string(data), want) {
			t.Fatalf("the %s trap did not go off with hooks on (marker %q)", want, data)
		}
	}
	if err := os.Remove(marker); err != nil {
		t.Fatal(err)
	}
	return dir
}
