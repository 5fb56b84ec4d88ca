package designdocs_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store/designdocs"
)

// newRepo makes a git repository with one commit on main and a branch
// "other" that changes the README.
func newRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	run(t, dir, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(dir, "README"), []byte("hello\n"), 0o644)
	run(t, dir, "add", "README")
	run(t, dir, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
	run(t, dir, "branch", "other")
	return dir
}

func run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func TestCheck(t *testing.T) {
	plain := t.TempDir()
	tests := []struct{ repo, wantErr string }{
		{"/", `repo: "/" is not under spec_tasks.repo_roots (` + plain + `)`},
		{filepath.Join(plain, "nope"), `repo: "` + filepath.Join(plain, "nope") + `" does not exist`},
		{plain, `repo: "` + plain + `" is not a git repository`},
		{"relative/path", `give an absolute path`},
		{"https://example.com/x.git", `only a local path to a git repository is supported`},
	}
	for _, tt := range tests {
		_, err := designdocs.Check(t.Context(), tt.repo, []string{plain})
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, domain.ErrInvalid) {
			t.Errorf("Check(%q) = %v, want %q", tt.repo, err, tt.wantErr)
		}
	}
}

func TestWriteCommitsForwardAsTheWorker(t *testing.T) {
	repo := newRepo(t)
	book, err := designdocs.Open(t.Context(), repo)
	if err != nil {
		t.Fatal(err)
	}
	first, err := book.Write(t.Context(), designdocs.Author{ID: "w-plan", Name: "Planner"}, "t-login", "requirements",
		map[string]string{"requirements.md": "# Login\n"})
	if err != nil {
		t.Fatal(err)
	}
	// Reopening reuses the branch and worktree.
	if book, err = designdocs.Open(t.Context(), repo); err != nil {
		t.Fatal(err)
	}
	second, err := book.Write(t.Context(), designdocs.Author{ID: "w-b1", Name: "Builder"}, "t-login", "progress",
		map[string]string{"progress.md": "- [ ] 1. a\n", "sessions/1-w-b1.md": "did a\n"})
	if err != nil {
		t.Fatal(err)
	}
	same, err := book.Write(t.Context(), designdocs.Author{ID: "w-b1"}, "t-login", "nothing", map[string]string{"progress.md": "- [ ] 1. a\n"})
	if err != nil || same != second {
		t.Fatalf("unchanged write = %s, %v; want head %s", same, err, second)
	}
	run(t, repo, "merge-base", "--is-ancestor", first, second)
	if got := run(t, repo, "log", "-1", "--format=%an <%ae>", designdocs.Branch); got != "Builder <w-b1@helix-org.local>" {
		t.Errorf("author = %q", got)
	}
	if _, edited, err := book.Edited(t.Context(), "t-login", "progress.md"); err != nil || edited {
		t.Errorf("Edited after the server's own commit = %v, %v; want false", edited, err)
	}
	os.WriteFile(filepath.Join(book.Dir, "t-login", "progress.md"), []byte("- [x] 1. a\n"), 0o644)
	run(t, book.Dir, "-c", "user.name=agent", "-c", "user.email=a@a", "commit", "-qam", "tick")
	if md, edited, err := book.Edited(t.Context(), "t-login", "progress.md"); err != nil || !edited || md != "- [x] 1. a\n" {
		t.Errorf("Edited after an agent's commit = %q, %v, %v", md, edited, err)
	}
	// The main checkout switches branches; the worktree stays as it is.
	run(t, repo, "checkout", "-q", "other")
	got, err := book.Read(t.Context(), "t-login", "progress.md")
	if err != nil || got != "- [x] 1. a\n" {
		t.Errorf("read = %q, %v", got, err)
	}
	if data, err := os.ReadFile(filepath.Join(book.Dir, "t-login", "requirements.md")); err != nil || string(data) != "# Login\n" {
		t.Errorf("worktree file = %q, %v", data, err)
	}
	if status := run(t, repo, "status", "--porcelain"); status != "" {
		t.Errorf("main checkout status = %q, want clean (.git-worktrees excluded)", status)
	}
}
