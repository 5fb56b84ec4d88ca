package designdocs_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store/designdocs"
	"github.com/helixml/helix-org/store/designdocs/gittest"
)

// TestNoRepositoryCodeRuns: everything the server does with a repository
// (check, open the docs worktree, commit, read, clone it by file:// and
// push back into it) runs none of its hooks nor its fsmonitor.
func TestNoRepositoryCodeRuns(t *testing.T) {
	root := t.TempDir()
	marker := filepath.Join(t.TempDir(), "marker")
	tests := []struct {
		name string
		repo func(t *testing.T, r designdocs.Remote, repo string) string
	}{
		{"a local path", func(t *testing.T, r designdocs.Remote, repo string) string {
			top, _, err := designdocs.Resolve(t.Context(), repo, r)
			if err != nil {
				t.Fatal(err)
			}
			return top
		}},
		{"a file URL, cloned and pushed back", func(t *testing.T, r designdocs.Remote, repo string) string {
			top, _, err := designdocs.Resolve(t.Context(), "file://"+repo, r)
			if err != nil {
				t.Fatal(err)
			}
			return top
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo := gittest.Trapped(t, filepath.Join(root, filepath.Base(t.Name())), marker)
			r := designdocs.Remote{ClonesDir: t.TempDir(), Roots: []string{root}}
			top := tt.repo(t, r, repo)
			book, err := designdocs.Open(t.Context(), top)
			if err != nil {
				t.Fatal(err)
			}
			task := "t-" + strings.ReplaceAll(tt.name, " ", "-")
			for i, body := range []string{"# one\n", "# two\n"} {
				if _, err := book.Write(t.Context(), designdocs.Author{ID: "w-plan"}, task, "requirements", map[string]string{"requirements.md": body}); err != nil {
					t.Fatalf("write %d: %v", i, err)
				}
			}
			if _, _, err := book.Edited(t.Context(), task, "requirements.md"); err != nil {
				t.Fatal(err)
			}
			if top != repo {
				if err := r.Push(t.Context(), top, "file://"+repo); err != nil {
					t.Fatal(err)
				}
				if got := gittest.Git(t, repo, "show", designdocs.Branch+":"+task+"/requirements.md"); got != "# two" {
					t.Errorf("pushed requirements.md = %q", got)
				}
			}
			if data, err := os.ReadFile(marker); err == nil {
				t.Errorf("the repository's code ran: %q", data)
			}
		})
	}
}

// TestCodeRunningConfigRefused: a repository whose config (or a file it
// includes) names a program git would run is refused, naming the key;
// what the server turns off itself (hooks, fsmonitor, pager) is not.
func TestCodeRunningConfigRefused(t *testing.T) {
	root := t.TempDir()
	tests := []struct {
		key, value string
		wantErr    string // empty: accepted
	}{
		{"filter.lfs.smudge", "sh -c evil", "sets filter.lfs.smudge, which makes git run a program"},
		{"filter.x.process", "evil", "sets filter.x.process"},
		{"diff.x.textconv", "evil", "sets diff.x.textconv"},
		{"diff.external", "evil", "sets diff.external"},
		{"merge.ours.driver", "evil %A", "sets merge.ours.driver"},
		{"core.sshCommand", "evil", "sets core.sshcommand"},
		{"core.editor", "evil", "sets core.editor"},
		{"core.askPass", "evil", "sets core.askpass"},
		{"uploadpack.packObjectsHook", "evil", "sets uploadpack.packobjectshook"},
		{"credential.helper", "!evil", "sets credential.helper"},
		{"credential.https://example.com.helper", "evil", "sets credential.https://example.com.helper"},
		{"gpg.program", "evil", "sets gpg.program"},
		{"remote.origin.uploadpack", "evil", "sets remote.origin.uploadpack"},
		{"remote.origin.receivepack", "evil", "sets remote.origin.receivepack"},
		{"url.file:///etc/.insteadOf", "https://example.com/", "sets url.file:///etc/.insteadof"},
		{"core.hooksPath", "/tmp/evil-hooks", ""},
		{"core.fsmonitor", "/tmp/evil-fsmonitor", ""},
		{"core.pager", "evil", ""},
		{"protocol.ext.allow", "always", ""},
		{"user.name", "Someone", ""},
	}
	for i, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			repo := filepath.Join(root, fmt.Sprint(i))
			run(t, root, "init", "-q", "-b", "main", repo)
			run(t, repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "init")
			run(t, repo, "config", tt.key, tt.value)
			_, err := designdocs.Check(t.Context(), repo, []string{root})
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Check = %v, want the repository accepted", err)
				}
				return
			}
			if !errors.Is(err, domain.ErrInvalid) || err == nil || !strings.Contains(err.Error(), "repo: ") || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Check = %v, want an invalid repo: %q", err, tt.wantErr)
			}
		})
	}
	t.Run("a key in a file the config includes", func(t *testing.T) {
		repo := filepath.Join(root, "includes")
		run(t, root, "init", "-q", "-b", "main", repo)
		os.WriteFile(filepath.Join(root, "extra.gitconfig"), []byte("[filter \"x\"]\n\tclean = evil\n"), 0o644)
		run(t, repo, "config", "include.path", filepath.Join(root, "extra.gitconfig"))
		if _, err := designdocs.Open(t.Context(), repo); err == nil || !strings.Contains(err.Error(), "sets filter.x.clean") {
			t.Fatalf("Open = %v, want the included filter named", err)
		}
	})
}

// TestRepoRoots: local repositories, as paths or file:// URLs, are
// refused unless under spec_tasks.repo_roots, symlinks resolved first.
func TestRepoRoots(t *testing.T) {
	allowed, outside := t.TempDir(), t.TempDir()
	inside := gittest.Repo(t, filepath.Join(allowed, "app"))
	other := gittest.Repo(t, filepath.Join(outside, "app"))
	link := filepath.Join(allowed, "link")
	rootLink := filepath.Join(t.TempDir(), "roots")
	for from, to := range map[string]string{link: other, rootLink: allowed} {
		if err := os.Symlink(to, from); err != nil {
			t.Fatal(err)
		}
	}
	// A repository inside whose git directory is outside.
	gitfile := filepath.Join(allowed, "gitfile")
	os.MkdirAll(gitfile, 0o755)
	os.WriteFile(filepath.Join(gitfile, ".git"), []byte("gitdir: "+filepath.Join(other, ".git")+"\n"), 0o644)
	tests := []struct {
		name, repo string
		roots      []string
		wantErr    string
	}{
		{"a path inside a root", inside, []string{allowed}, ""},
		{"a file URL inside a root", "file://" + inside, []string{allowed}, ""},
		{"a root given through a symlink", inside, []string{rootLink}, ""},
		{"no roots: a path", inside, nil, "local repositories are refused until an operator lists where they may be in the setting spec_tasks.repo_roots"},
		{"no roots: a file URL", "file://" + inside, nil, "local repositories are refused until an operator lists where they may be in the setting spec_tasks.repo_roots"},
		{"a path outside the roots", other, []string{allowed}, "is not under spec_tasks.repo_roots (" + allowed + ")"},
		{"a file URL outside the roots", "file://" + other, []string{allowed}, "is not under spec_tasks.repo_roots"},
		{"a symlink inside to a repository outside", link, []string{allowed}, "is not under spec_tasks.repo_roots"},
		{"a file URL through the symlink", "file://" + link, []string{allowed}, "is not under spec_tasks.repo_roots"},
		{"a git directory outside", gitfile, []string{allowed}, "is not under spec_tasks.repo_roots"},
		{"a path beside a root sharing its prefix", other, []string{outside + "x", outside[:len(outside)-1]}, "is not under spec_tasks.repo_roots"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := designdocs.Remote{ClonesDir: t.TempDir(), Roots: tt.roots}
			_, _, err := designdocs.Resolve(t.Context(), tt.repo, r)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Resolve = %v, want it accepted", err)
				}
				return
			}
			if !errors.Is(err, domain.ErrInvalid) || !strings.Contains(err.Error(), "repo: ") || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Resolve = %v, want an invalid repo: %q", err, tt.wantErr)
			}
			if entries, _ := os.ReadDir(r.ClonesDir); len(entries) != 0 {
				t.Errorf("a refused repository left %d entries in the clones dir", len(entries))
			}
		})
	}
	// Pushing back checks the roots again: a root removed since refuses.
	t.Run("a push after the root was removed", func(t *testing.T) {
		r := designdocs.Remote{ClonesDir: t.TempDir(), Roots: []string{allowed}}
		top, _, err := designdocs.Resolve(t.Context(), "file://"+inside, r)
		if err != nil {
			t.Fatal(err)
		}
		r.Roots = []string{outside}
		if err := r.Push(t.Context(), top, "file://"+inside); err == nil || !strings.Contains(err.Error(), "is not under spec_tasks.repo_roots") {
			t.Fatalf("Push = %v, want refused", err)
		}
	})
}

func TestParseRoots(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		wantErr string
	}{
		{"", nil, ""},
		{"/srv/repos", []string{"/srv/repos"}, ""},
		{" /srv/repos/ , /home/dev/code ,", []string{"/srv/repos", "/home/dev/code"}, ""},
		{"/srv/repos,relative/path", nil, `spec_tasks.repo_roots: "relative/path" is not an absolute path`},
	}
	for _, tt := range tests {
		got, err := designdocs.ParseRoots(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseRoots(%q) = %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("ParseRoots(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

// TestCommandEnvironment: git gets no system or user config and no
// GIT_* variables from the server's environment.
func TestCommandEnvironment(t *testing.T) {
	t.Setenv("GIT_DIR", "/etc")
	t.Setenv("GIT_CONFIG_PARAMETERS", "'core.hookspath'='/tmp/evil'")
	cmd := designdocs.Command(t.Context(), t.TempDir(), "config", "--list", "--show-scope")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git config --list: %v\n%s", err, out)
	}
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		if !strings.HasPrefix(line, "command\t") {
			t.Errorf("git read config from outside the command line: %q", line)
		}
	}
	if !strings.Contains(string(out), "core.hookspath=/dev/null") || strings.Contains(string(out), "/tmp/evil") {
		t.Errorf("git config = %s", out)
	}
}
