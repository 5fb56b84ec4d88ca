// Package workspace keeps AI workers' workspaces in git: before a run it
// makes the worker's working tree (a repository of its own, or a checkout
// of the repository attached to it on branch helix/<worker>), after the
// run it commits what changed with the worker as author and the run in
// the message, and it pushes the branch for a pull request. The agent
// can write to the repository, .git included, so every command is built
// by designdocs.Command (no hooks, no fsmonitor) and the repository is
// checked (designdocs.CheckConfig, its layout) before the server runs git
// in it. It imports only domain and designdocs.
package workspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store/designdocs"
)

// committer is the server's name on the commits it makes for workers.
const committer = "helix-org"

// Author is who a workspace's commits are made for.
type Author struct{ ID, Name string }

func (a Author) name() string {
	if a.Name == "" {
		return a.ID
	}
	return a.Name
}

func (a Author) email() string { return a.ID + "@helix-org.local" }

// Prepare makes ws's working tree at dir ready for a run. A tree there
// that ws was not prepared for (a repository attached or detached since)
// is moved aside, never deleted; moved says where, or is empty. The
// caller records ws.Attachment() as what dir was prepared for.
func Prepare(ctx context.Context, dir string, ws domain.Workspace, a Author) (moved string, err error) {
	if ws.Dir != dir || !ws.Current() {
		if moved, err = moveAside(dir); err != nil {
			return "", err
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
		return moved, Check(ctx, dir)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return moved, fmt.Errorf("workspace %s: %w", dir, err)
	}
	if _, err := git(ctx, dir, "init", "-q", "-b", ws.Branch); err != nil {
		return moved, err
	}
	// The agent's own commits, made inside the sandbox with no user
	// config, carry the worker's name too.
	for k, v := range map[string]string{"user.name": a.name(), "user.email": a.email()} {
		if _, err := git(ctx, dir, "config", k, v); err != nil {
			return moved, err
		}
	}
	if ws.URL == "" {
		_, err = git(ctx, dir, "-c", "user.name="+committer, "-c", "user.email=helix-org@localhost", "commit", "-q", "--allow-empty",
			"--author", a.name()+" <"+a.email()+">", "-m", "workspace of "+a.ID)
		return moved, err
	}
	// From the server's clone of the attached repository (made and
	// checked when it was attached): its remote branches are the
	// repository's branches.
	ref := "refs/remotes/origin/" + ws.Base
	if _, err := git(ctx, dir, "-c", "protocol.file.allow=always", "fetch", "-q", "--no-tags",
		"--upload-pack=git -c core.hooksPath=/dev/null -c core.fsmonitor=false upload-pack", "--", ws.Source, "+"+ref+":"+ref); err != nil {
		return moved, fmt.Errorf("workspace of %s: branch %s of %s: %w", a.ID, ws.Base, ws.URL, err)
	}
	_, err = git(ctx, dir, "checkout", "-q", "-B", ws.Branch, "origin/"+ws.Base)
	return moved, err
}

// moveAside renames dir, if it exists, to dir.<time>.
func moveAside(dir string) (string, error) {
	if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	to := dir + "." + time.Now().UTC().Format("20060102T150405.000000000")
	if err := os.Rename(dir, to); err != nil {
		return "", fmt.Errorf("move workspace %s aside: %w", dir, err)
	}
	return to, nil
}

// Check refuses a workspace the agent has made unsafe for the server's
// git: a .git that is not a plain directory (a file or link sending git
// to another repository), a working tree elsewhere than dir, or config
// that makes git run a program.
func Check(ctx context.Context, dir string) error {
	fi, err := os.Lstat(filepath.Join(dir, ".git"))
	if err != nil || !fi.IsDir() {
		return domain.Invalid("workspace", "%s/.git is not a directory; the server works only in a plain repository", dir)
	}
	if err := designdocs.CheckConfig(ctx, dir, "workspace"); err != nil {
		return err
	}
	top, err := git(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return err
	}
	if real, _ := filepath.EvalSymlinks(dir); top != real && top != dir {
		return domain.Invalid("workspace", "%s: its git config puts the working tree at %s", dir, top)
	}
	return nil
}

// Commit commits everything that changed in the workspace at dir, as a,
// naming the run, and returns the head. Nothing changed, nothing is
// committed.
func Commit(ctx context.Context, dir string, a Author, activation string) (head string, committed bool, err error) {
	if err := Check(ctx, dir); err != nil {
		return "", false, err
	}
	if _, err := git(ctx, dir, "add", "-A"); err != nil {
		return "", false, err
	}
	if _, err := git(ctx, dir, "diff", "--cached", "--quiet"); err != nil {
		msg := fmt.Sprintf("Changes of run %s\n\nHelix-Activation: %s\nHelix-Worker: %s\n", activation, activation, a.ID)
		if _, err := git(ctx, dir, "-c", "user.name="+committer, "-c", "user.email=helix-org@localhost", "commit", "-q",
			"--author", a.name()+" <"+a.email()+">", "-m", msg); err != nil {
			return "", false, err
		}
		committed = true
	}
	head, err = git(ctx, dir, "rev-parse", "HEAD")
	return head, committed, err
}

// git runs one git command in a workspace. safe.directory names it
// because a container may have left its files owned by another user.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	return run(designdocs.Command(ctx, dir, append([]string{"-c", "safe.directory=" + dir}, args...)...), args)
}

func run(cmd *exec.Cmd, args []string) (string, error) {
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %s", args[0], strings.TrimSpace(stderr.String()+" "+err.Error()))
	}
	return strings.TrimSpace(stdout.String()), nil
}

// Base checks that the server's clone at source has the branch base,
// or, when base is empty, returns the branch its origin points HEAD at.
func Base(ctx context.Context, source, base string) (string, error) {
	if base == "" {
		head, err := git(ctx, source, "symbolic-ref", "--short", "refs/remotes/origin/HEAD")
		if err != nil {
			return "", domain.Invalid("branch", "the repository names no default branch; give the branch to start from")
		}
		return strings.TrimPrefix(head, "origin/"), nil
	}
	if _, err := git(ctx, source, "check-ref-format", "--branch", base); err != nil {
		return "", domain.Invalid("branch", "%q is not a branch name", base)
	}
	if _, err := git(ctx, source, "rev-parse", "--verify", "--quiet", "refs/remotes/origin/"+base); err != nil {
		return "", domain.Invalid("branch", "the repository has no branch %q", base)
	}
	return base, nil
}
