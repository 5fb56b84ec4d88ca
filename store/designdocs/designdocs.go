// Package designdocs keeps spec tasks' documents in git: a branch
// helix-design-docs checked out as a worktree at
// .git-worktrees/helix-design-docs beside the repository's working tree,
// so the main checkout may switch branches without touching it. Every
// change is a new commit authored as the worker it is made for; nothing
// here rewrites history. It drives the git CLI, every command built by
// Command so that no repository's code runs (gitcmd.go), clones
// repositories given as URLs (clone.go), and imports only domain and
// safedial's address check.
package designdocs

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/helixml/helix-org/domain"
)

// Branch is the branch the documents live on.
const Branch = "helix-design-docs"

// WorktreeDir is where its worktree is, relative to the working tree.
const WorktreeDir = ".git-worktrees/" + Branch

// Book is the design-docs worktree of one repository.
type Book struct {
	// Top is the repository's working tree; Dir the docs worktree.
	Top, Dir string
}

// committer is the server's name on every commit it makes, which tells
// its commits from the ones agents make in the worktree themselves.
const committer = "helix-org"

// Author is who a commit is made for.
type Author struct{ ID, Name string }

// locks serialises git commands per worktree within the server: git's
// own index.lock would make a concurrent commit fail instead of wait.
var locks sync.Map // dir → *sync.Mutex

func lock(dir string) func() {
	m, _ := locks.LoadOrStore(dir, &sync.Mutex{})
	m.(*sync.Mutex).Lock()
	return m.(*sync.Mutex).Unlock
}

// Check refuses a repository that is not a local git working tree under
// one of roots (spec_tasks.repo_roots, symlinks resolved), or whose config
// makes git run a program, naming the field, so create_spec_task fails
// before anything is recorded.
func Check(ctx context.Context, repo string, roots []string) (string, error) {
	if strings.Contains(repo, "://") {
		return "", domain.Invalid("repo", "%q: only a local path to a git repository is supported", repo)
	}
	if !filepath.IsAbs(repo) {
		return "", domain.Invalid("repo", "%q: give an absolute path", repo)
	}
	if _, err := os.Stat(repo); err != nil {
		return "", domain.Invalid("repo", "%q does not exist", repo)
	}
	if err := underRoots("repo", repo, roots); err != nil {
		return "", err
	}
	top, err := toplevel(ctx, repo)
	if err != nil {
		return "", err
	}
	// The working tree and the git directory it writes to must be inside
	// a root too, not only the path named.
	common, err := git(ctx, top, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return "", err
	}
	for _, p := range []string{top, common} {
		if err := underRoots("repo", p, roots); err != nil {
			return "", err
		}
	}
	return top, nil
}

// toplevel is the working tree of the repository at path, refused when
// it is none or its config makes git run a program.
func toplevel(ctx context.Context, path string) (string, error) {
	top, err := git(ctx, path, "rev-parse", "--show-toplevel")
	if err != nil || top == "" {
		return "", domain.Invalid("repo", "%q is not a git repository", path)
	}
	return top, checkConfig(ctx, top, "repo")
}

// Open returns the repository's docs worktree, creating the branch (from
// origin's when a clone has one, else from an empty commit, so it shares
// nothing with the code) and the worktree when they do not exist yet.
func Open(ctx context.Context, repo string) (*Book, error) {
	top, err := toplevel(ctx, repo)
	if err != nil {
		return nil, err
	}
	b := &Book{Top: top, Dir: filepath.Join(top, WorktreeDir)}
	defer lock(b.Dir)()
	_, err = git(ctx, top, "rev-parse", "--verify", "--quiet", "refs/heads/"+Branch)
	if err != nil {
		// A clone whose origin has the branch continues it, so pushing
		// back stays a fast-forward.
		_, err = git(ctx, top, "branch", Branch, "refs/remotes/origin/"+Branch)
	}
	if err != nil {
		tree, err := git(ctx, top, "hash-object", "-t", "tree", "-w", "--stdin")
		if err != nil {
			return nil, err
		}
		root, err := git(ctx, top, "-c", "user.name="+committer, "-c", "user.email=helix-org@localhost", "commit-tree", tree, "-m", "helix design docs")
		if err != nil {
			return nil, err
		}
		if _, err := git(ctx, top, "branch", Branch, root); err != nil {
			return nil, err
		}
	}
	if _, err := os.Stat(filepath.Join(b.Dir, ".git")); err != nil {
		if _, err := git(ctx, top, "worktree", "add", b.Dir, Branch); err != nil {
			return nil, err
		}
	}
	// The docs worktree may have config of its own (config.worktree).
	if err := checkConfig(ctx, b.Dir, "repo"); err != nil {
		return nil, err
	}
	return b, exclude(ctx, top)
}

// exclude keeps .git-worktrees out of the main checkout's status.
func exclude(ctx context.Context, top string) error {
	path, err := git(ctx, top, "rev-parse", "--git-path", "info/exclude")
	if err != nil {
		return err
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(top, path)
	}
	data, _ := os.ReadFile(path)
	if bytes.Contains(data, []byte("/.git-worktrees/")) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("exclude .git-worktrees: %w", err)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("exclude .git-worktrees: %w", err)
	}
	defer f.Close()
	_, err = f.WriteString("\n/.git-worktrees/\n")
	return err
}

// Write puts files (names relative to the task's folder) in the task's
// folder and commits them as author. Nothing changed, nothing committed;
// it returns the branch's head either way.
func (b *Book) Write(ctx context.Context, author Author, task, message string, files map[string]string) (string, error) {
	return b.WriteFrom(ctx, author, task, message, func() (map[string]string, error) { return files, nil })
}

// WriteFrom is Write with the files made under the worktree's lock, so
// two writers rendering the same document commit them in the order they
// read the state, never an older rendering over a newer one.
func (b *Book) WriteFrom(ctx context.Context, author Author, task, message string, render func() (map[string]string, error)) (string, error) {
	defer lock(b.Dir)()
	files, err := render()
	if err != nil {
		return "", err
	}
	for name, content := range files {
		path := filepath.Join(b.Dir, task, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return "", fmt.Errorf("write %s: %w", name, err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			return "", fmt.Errorf("write %s: %w", name, err)
		}
	}
	if _, err := git(ctx, b.Dir, "add", "--", task); err != nil {
		return "", err
	}
	if _, err := git(ctx, b.Dir, "diff", "--cached", "--quiet"); err != nil {
		name := author.Name
		if name == "" {
			name = author.ID
		}
		if _, err := git(ctx, b.Dir, "-c", "user.name="+committer, "-c", "user.email=helix-org@localhost", "commit", "--quiet",
			"--author", fmt.Sprintf("%s <%s@helix-org.local>", name, author.ID), "-m", message); err != nil {
			return "", err
		}
	}
	return git(ctx, b.Dir, "rev-parse", "HEAD")
}

// Read returns one of a task's files as committed on the branch, so an
// agent's commit counts and its uncommitted edits do not.
func (b *Book) Read(ctx context.Context, task, name string) (string, error) {
	out, err := gitRaw(ctx, b.Dir, "show", Branch+":"+task+"/"+name)
	if err != nil {
		return "", fmt.Errorf("read %s/%s: %w", task, name, err)
	}
	return out, nil
}

// Edited returns a task's file as committed on the branch when the last
// commit to touch it was not the server's (an agent committed an edit),
// and false otherwise: the server's own renderings are never read back,
// so an old one cannot undo what happened since.
func (b *Book) Edited(ctx context.Context, task, name string) (string, bool, error) {
	by, err := git(ctx, b.Dir, "log", "-1", "--format=%cn", Branch, "--", task+"/"+name)
	if err != nil || by == "" || by == committer {
		return "", false, err
	}
	out, err := b.Read(ctx, task, name)
	return out, err == nil, err
}
