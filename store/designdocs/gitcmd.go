package designdocs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/helixml/helix-org/domain"
)

// The server runs git in repositories people name, as its own user; git
// runs programs a repository's config or hooks directory names (hooks,
// fsmonitor, filter and diff drivers, editors, credential helpers). Every
// git command is built by Command, which turns off what can be turned off
// from the command line, gives git no system or user config and no
// terminal, and allows no transport: the one that talks to a remote
// allows its URL's protocol itself. What cannot be turned off is refused
// by checkConfig before the server runs git in the repository.

// safeConfig comes before every command's own arguments; a command may
// override a protocol after it (remoteGit).
var safeConfig = []string{
	"-c", "core.hooksPath=/dev/null",
	"-c", "core.fsmonitor=false",
	"-c", "protocol.allow=never",
	"-c", "protocol.file.allow=never",
	"-c", "protocol.ext.allow=never",
	"-c", "commit.gpgSign=false",
	"-c", "tag.gpgSign=false",
}

// Command builds a git command run in dir (none when empty): every git
// command of the server, and of the tests' fixtures, is made here. args
// may start with more -c overrides before the subcommand.
func Command(ctx context.Context, dir string, args ...string) *exec.Cmd {
	pre := []string{"--no-pager"}
	if dir != "" {
		pre = append(pre, "-C", dir)
	}
	pre = append(pre, safeConfig...)
	cmd := exec.CommandContext(ctx, "git", append(pre, args...)...)
	cmd.Env = gitEnv()
	return cmd
}

// gitEnv is the server's environment without what steers git or curl
// (GIT_*, proxies, HOME, XDG_CONFIG_HOME), plus no system or global
// config, a HOME of its own, and no prompts.
func gitEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch strings.ToLower(k) {
		case "http_proxy", "https_proxy", "all_proxy", "no_proxy", "home", "xdg_config_home":
			continue
		}
		if strings.HasPrefix(k, "GIT_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+gitHome(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=true", "SSH_ASKPASS=true")
}

// gitHome is an empty directory git may take for HOME: no ~/.netrc,
// ~/.git-credentials or ~/.config/git for it to read.
var gitHome = sync.OnceValue(func() string {
	dir, err := os.MkdirTemp("", "helix-org-git-home-")
	if err != nil {
		return "/nonexistent"
	}
	return dir
})

// git runs one git command in dir and returns its trimmed output.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	out, err := gitRaw(ctx, dir, args...)
	return strings.TrimSpace(out), err
}

func gitRaw(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := Command(ctx, dir, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return stdout.String(), fmt.Errorf("git %s: %s", strings.Join(args, " "), strings.TrimSpace(stderr.String()))
		}
		return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return stdout.String(), nil
}

// runsCode reports whether a config key (as git lists it: section and
// name lower case) names a program git would run, or sends git to one.
// Hooks, fsmonitor, pagers and protocols are turned off by Command.
func runsCode(key string) bool {
	switch key {
	case "core.sshcommand", "core.gitproxy", "core.askpass", "core.editor", "core.alternaterefscommand",
		"sequence.editor", "diff.external", "uploadpack.packobjectshook", "gpg.program", "credential.helper":
		return true
	}
	section, rest, _ := strings.Cut(key, ".")
	i := strings.LastIndex(rest, ".")
	if i < 0 {
		return false
	}
	name := rest[i+1:]
	switch section {
	case "filter":
		return true // clean, smudge, process, required: a driver either way
	case "diff":
		return name == "command" || name == "textconv"
	case "merge":
		return name == "driver"
	case "credential":
		return name == "helper"
	case "gpg":
		return name == "program"
	case "remote":
		return name == "uploadpack" || name == "receivepack" || name == "vcs"
	case "mergetool", "difftool":
		return name == "cmd"
	case "trailer":
		return name == "command" || name == "cmd"
	case "url":
		return name == "insteadof" || name == "pushinsteadof" // could send a push to another repository
	}
	return false
}

// checkConfig refuses a repository whose own config (with what it
// includes) sets a key that makes git run a program Command cannot turn
// off, naming the key. field is the tool field the error names.
func checkConfig(ctx context.Context, dir, field string) error {
	out, err := gitRaw(ctx, dir, "config", "--list", "--includes", "--show-scope", "-z")
	if err != nil {
		return fmt.Errorf("read the git config of %s: %w", dir, err)
	}
	entries := strings.Split(strings.TrimSuffix(out, "\x00"), "\x00")
	for i := 0; i+1 < len(entries); i += 2 {
		scope := entries[i]
		key, _, _ := strings.Cut(entries[i+1], "\n")
		if scope != "command" && runsCode(key) {
			return domain.Invalid(field, "%s: its git config sets %s, which makes git run a program; the server never runs a repository's code (remove the key to use it)", dir, key)
		}
	}
	return nil
}

// RepoRootsKey is the setting listing where local repositories may be.
const RepoRootsKey = "spec_tasks.repo_roots"

// ParseRoots reads spec_tasks.repo_roots: comma-separated absolute paths.
func ParseRoots(v string) ([]string, error) {
	var roots []string
	for r := range strings.SplitSeq(v, ",") {
		if r = strings.TrimSpace(r); r == "" {
			continue
		}
		if !filepath.IsAbs(r) {
			return nil, domain.Invalid(RepoRootsKey, "%q is not an absolute path (give comma-separated absolute paths)", r)
		}
		roots = append(roots, filepath.Clean(r))
	}
	return roots, nil
}

// underRoots resolves path's symlinks and reports an error unless what it
// names is one of roots (their symlinks resolved too) or inside one.
func underRoots(field, path string, roots []string) error {
	if len(roots) == 0 {
		return domain.Invalid(field, "%q: local repositories are refused until an operator lists where they may be in the setting %s (comma-separated absolute paths)", path, RepoRootsKey)
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return domain.Invalid(field, "%q does not exist", path)
	}
	for _, root := range roots {
		if r, err := filepath.EvalSymlinks(root); err == nil && within(real, r) {
			return nil
		}
	}
	return domain.Invalid(field, "%q is not under %s (%s); symlinks are followed before the check", path, RepoRootsKey, strings.Join(roots, ", "))
}

func within(path, root string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
}

// CheckConfig is checkConfig for the server's other git work (workers'
// workspaces): a repository an agent could write to is checked before
// every command the server runs in it.
func CheckConfig(ctx context.Context, dir, field string) error { return checkConfig(ctx, dir, field) }
