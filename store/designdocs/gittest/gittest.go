// Package gittest serves git repositories over smart HTTP on loopback for
// tests: git's own http-backend run as a CGI behind httptest, so clones
// and pushes go through the same protocol as against a real forge.
package gittest

import (
	"net/http/cgi"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Serve serves the repositories under root at URL/<name>; push lets
// clients push (receive-pack), which http-backend refuses by default
// without an authenticated user.
func Serve(t *testing.T, root string, push bool) *httptest.Server {
	t.Helper()
	out, err := exec.Command("git", "--exec-path").Output()
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
	Git(t, "", "clone", "-q", "--bare", src, dir)
	return dir
}

// Git runs git in dir (none when empty) and returns its trimmed output.
func Git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	if dir != "" {
		args = append([]string{"-C", dir}, args...)
	}
	out, err := exec.Command("git", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}
