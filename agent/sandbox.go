package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// Bwrap runs a host agent in a bubblewrap sandbox (Debian's bubblewrap,
// as Flatpak and Claude Code use it on Linux): its own user, pid, IPC,
// UTS and cgroup namespaces, every capability dropped, a fresh /proc that
// shows only its own processes, a fresh /dev and /tmp, the system's /usr,
// /bin, /lib* and a few files of /etc read-only, the helix-org executable
// and the agent's own program read-only, and its worker's directory
// read-write. Nothing else of the host is there: not the database, its
// key, the envs dir's other workers, nor HOME. The network is shared: the
// agent reaches its MCP endpoint and the relay on loopback.
type Bwrap struct {
	// Path is the bwrap executable.
	Path string
	// Exe is the helix-org executable, bound read-only at its path, so a
	// command can run `helix-org …` and the builtin runtime its agent.
	Exe string
	// Paths are the operator's extra binds (agent.sandbox.paths).
	Paths SandboxPaths
}

// SandboxHome is HOME inside the sandbox: an empty directory on its
// tmpfs /tmp, so nothing an agent keeps there (Claude Code's settings,
// a shell's history) outlives the run or reaches the server's HOME.
const SandboxHome = "/tmp/home"

// sandboxUID is who the agent is inside its user namespace: nobody. Its
// files on the host still belong to the server's user.
const sandboxUID = "65534"

// systemDirs are bound read-only, or recreated as the symlinks they are
// (a merged /usr: /bin -> usr/bin).
var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}

// etcFiles is what of /etc programs need: users and groups by name, name
// resolution, the dynamic linker's cache, TLS roots, time zone. Not
// shadow, not ssl/private, not the server's own configuration.
var etcFiles = []string{"passwd", "group", "nsswitch.conf", "hosts", "host.conf", "resolv.conf", "gai.conf", "services", "protocols",
	"localtime", "timezone", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "ssl/certs", "ssl/openssl.cnf",
	"ca-certificates", "ca-certificates.conf", "pki/tls/certs", "crypto-policies", "mime.types", "os-release", "debian_version"}

// Wrap rewrites cmd, built to run on the host in envDir, to run the same
// program in the sandbox, with envDir as its working directory. bins are
// the programs it runs from outside the system directories (Claude Code),
// bound read-only at their paths. cmd.Env is kept — never put on bwrap's
// command line, which every user of the host can read — with HOME and
// TMPDIR pointing into the sandbox.
func (b *Bwrap) Wrap(cmd *exec.Cmd, envDir string, bins ...string) error {
	dir, err := filepath.Abs(envDir)
	if err != nil {
		return fmt.Errorf("sandbox: worker directory %s: %w", envDir, err)
	}
	args := append([]string{filepath.Base(b.Path)}, b.args(dir, bins)...)
	cmd.Args = append(append(args, "--", cmd.Path), cmd.Args[1:]...)
	cmd.Path = b.Path
	cmd.Env = append(slices.DeleteFunc(cmd.Env, func(kv string) bool {
		return strings.HasPrefix(kv, "HOME=") || strings.HasPrefix(kv, "TMPDIR=")
	}), "HOME="+SandboxHome, "TMPDIR=/tmp")
	return nil
}

func (b *Bwrap) args(dir string, bins []string) []string {
	// No --die-with-parent: it would also end the sandbox with the server,
	// and an agent that outlives a crash is for the restarted server to
	// stop (StopOrphans) before its triggers run again, as with every host
	// runtime. A stop spares bwrap itself (terminate).
	a := []string{"--unshare-user", "--uid", sandboxUID, "--gid", sandboxUID, "--disable-userns",
		"--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try", "--cap-drop", "ALL",
		"--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--dir", SandboxHome}
	for _, d := range systemDirs {
		if target, err := os.Readlink(d); err == nil {
			a = append(a, "--symlink", target, d)
		} else {
			a = append(a, "--ro-bind-try", d, d)
		}
	}
	for _, f := range etcFiles {
		a = append(a, "--ro-bind-try", "/etc/"+f, "/etc/"+f)
	}
	seen := map[string]bool{}
	for _, p := range append([]string{b.Exe}, bins...) {
		if p != "" && !inSystemDir(p) && !seen[p] {
			seen[p] = true
			a = append(a, "--ro-bind", p, p)
		}
	}
	for _, p := range b.Paths.ReadOnly {
		a = append(a, "--ro-bind", p, p)
	}
	for _, p := range b.Paths.Writable {
		a = append(a, "--bind", p, p)
	}
	return append(a, "--bind", dir, dir, "--chdir", dir)
}

// inSystemDir reports whether p is already in the sandbox through /usr.
func inSystemDir(p string) bool {
	return strings.HasPrefix(p, "/usr/")
}

// SandboxCheck is whether bubblewrap can sandbox agents on this host, as
// CheckSandbox found it at start.
type SandboxCheck struct {
	// Bwrap is the bwrap executable; empty when there is none.
	Bwrap string
	// Err says why host agents cannot be sandboxed; nil when they can.
	Err error
}

// Result is the check itself, for a RuntimeEnv's Sandbox: a check made
// before, or a fixed one in tests.
func (c SandboxCheck) Result() SandboxCheck { return c }

// CheckSandboxLater runs CheckSandbox once after is closed and returns
// what waits for its result, once, and then returns it at once: a server
// answers its first request while nothing else starts processes, then
// bubblewrap starts its empty sandbox (tens of milliseconds), and only
// the first host run or stdio MCP server waits for it. What asks for the
// result before after is closed starts the check at once.
func CheckSandboxLater(ctx context.Context, after <-chan struct{}, path string, done func(SandboxCheck)) func() SandboxCheck {
	ch, now := make(chan SandboxCheck, 1), make(chan struct{})
	go func() {
		select {
		case <-after:
		case <-now:
		case <-ctx.Done():
		}
		c := CheckSandbox(ctx, path)
		if done != nil {
			done(c)
		}
		ch <- c
	}()
	return sync.OnceValue(func() SandboxCheck {
		close(now)
		return <-ch
	})
}

// debianBwrap is where Debian's bubblewrap installs bwrap, for a server
// started with a PATH that lacks it.
const debianBwrap = "/usr/bin/bwrap"

// CheckSandbox starts one empty sandbox with bwrap — path, or when that
// is empty the one on PATH, else debianBwrap — and the options agents
// get: a missing bwrap, a kernel or container without user namespaces,
// or a seccomp policy that forbids them all fail here, once, rather than
// in every run.
func CheckSandbox(ctx context.Context, path string) SandboxCheck {
	if path == "" {
		var err error
		if path, err = exec.LookPath("bwrap"); err != nil {
			if _, err := os.Stat(debianBwrap); err != nil {
				return SandboxCheck{Err: errors.New("bwrap is neither on PATH nor at " + debianBwrap + " (install Debian's bubblewrap package)")}
			}
			path = debianBwrap
		}
	}
	dir, err := os.MkdirTemp("", "helix-org-sandbox-check-")
	if err != nil {
		return SandboxCheck{Bwrap: path, Err: fmt.Errorf("a directory for the check: %w", err)}
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", "exit 0")
	b := &Bwrap{Path: path}
	if err := b.Wrap(cmd, dir); err != nil {
		return SandboxCheck{Bwrap: path, Err: err}
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return SandboxCheck{Bwrap: path, Err: fmt.Errorf("%s could not start a sandbox: %v: %s", path, err, strings.TrimSpace(string(out)))}
	}
	return SandboxCheck{Bwrap: path}
}
