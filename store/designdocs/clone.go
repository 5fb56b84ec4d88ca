package designdocs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/safedial"
)

// A task's repository may be a URL: the server clones it with the git CLI
// into a directory of its own and then treats the clone as a local path.
// http(s) URLs reach only public addresses unless Remote.AllowPrivate says
// otherwise: the host is resolved and checked here (safedial.Check), and
// git is pinned to the checked addresses (http.curloptResolve), never
// follows a redirect and uses no proxy, so a name that rebinds or a
// server that redirects cannot lead it inside the network.

// Remote is how the server may reach repositories given as URLs.
type Remote struct {
	// ClonesDir holds the clones, one directory per URL.
	ClonesDir string
	// AllowPrivate lets http(s) URLs reach loopback and private addresses.
	AllowPrivate bool
	// Resolver resolves host names; nil is the system's.
	Resolver *net.Resolver
	// MaxBytes caps a clone's size on disk (MaxBytesKey): git is stopped
	// once its copy grows past it, and the copy removed. 0 is no cap.
	MaxBytes int64
	// Roots are where local repositories, as paths or file:// URLs, may
	// be (RepoRootsKey); none refuses them all.
	Roots []string
}

// MaxBytesKey is the setting that sets Remote.MaxBytes; named in the
// error a clone over it gets.
const MaxBytesKey = "spec_tasks.max_clone_bytes"

// scpLike is git's user@host:path shorthand for ssh.
var scpLike = regexp.MustCompile(`^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:`)

// IsURL reports whether repo names a remote repository rather than a path.
func IsURL(repo string) bool { return strings.Contains(repo, "://") || scpLike.MatchString(repo) }

// Resolve turns a task's repo into a local working tree: a path is checked,
// a URL is cloned (or its earlier clone reused). origin is the URL, or
// empty for a path.
func Resolve(ctx context.Context, repo string, r Remote) (top, origin string, err error) {
	if !IsURL(repo) {
		top, err = Check(ctx, repo, r.Roots)
		return top, "", err
	}
	top, err = r.Clone(ctx, repo)
	return top, repo, err
}

// Clone clones rawURL into ClonesDir, or reuses the clone made before,
// and returns its working tree. A URL that cannot be cloned is an
// ErrInvalid naming the field repo, with git's own words.
func (r Remote) Clone(ctx context.Context, rawURL string) (string, error) {
	u, pin, err := r.check(ctx, rawURL)
	if err != nil {
		return "", err
	}
	if r.ClonesDir == "" {
		return "", fmt.Errorf("clone %s: no directory for clones is configured", redact(u))
	}
	dir, err := filepath.Abs(filepath.Join(r.ClonesDir, cloneName(u)))
	if err != nil {
		return "", fmt.Errorf("clone %s: %w", redact(u), err)
	}
	defer lock(dir)()
	if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
		return git(ctx, dir, "rev-parse", "--show-toplevel")
	}
	if err := os.MkdirAll(r.ClonesDir, 0o755); err != nil {
		return "", fmt.Errorf("clone %s: %w", redact(u), err)
	}
	// Cloned beside and renamed into place, so a failed clone leaves no
	// directory a later call would take for a good one.
	tmp, err := os.MkdirTemp(r.ClonesDir, ".clone-")
	if err != nil {
		return "", fmt.Errorf("clone %s: %w", redact(u), err)
	}
	defer os.RemoveAll(tmp)
	cloneCtx, stop := context.WithCancel(ctx)
	defer stop()
	tooBig := r.watchSize(cloneCtx, tmp, stop)
	_, err = remoteGit(cloneCtx, tmp, u.Scheme, pin, "clone", "--quiet", "--no-recurse-submodules", "--", u.String(), "repo")
	if tooBig() || r.MaxBytes > 0 && dirSize(tmp) > r.MaxBytes {
		return "", domain.Invalid("repo", "%s is larger than %d bytes, the most a clone may take (the setting %s)", redact(u), r.MaxBytes, MaxBytesKey)
	}
	if err != nil {
		return "", domain.Invalid("repo", "%s cannot be cloned: %v", redact(u), gitWords(err))
	}
	if err := os.Rename(filepath.Join(tmp, "repo"), dir); err != nil {
		return "", fmt.Errorf("clone %s: %w", redact(u), err)
	}
	return git(ctx, dir, "rev-parse", "--show-toplevel")
}

// watchSize stops a clone into dir, by stop, once dir holds more than
// MaxBytes; tooBig reports whether it did. A clone that finishes between
// two looks is measured again by the caller.
func (r Remote) watchSize(ctx context.Context, dir string, stop func()) (tooBig func() bool) {
	var over atomic.Bool
	if r.MaxBytes <= 0 {
		return over.Load
	}
	go func() {
		// Every 100 ms, or less often when walking the copy takes long
		// (a checkout of many files): the watch stays a small share of
		// the clone's own work.
		wait := time.NewTimer(100 * time.Millisecond)
		defer wait.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-wait.C:
				start := time.Now()
				if dirSize(dir) > r.MaxBytes {
					over.Store(true)
					stop()
					return
				}
				wait.Reset(max(100*time.Millisecond, 10*time.Since(start)))
			}
		}
	}()
	return over.Load
}

// dirSize is the bytes of the regular files under dir.
func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// Push sends the design-docs branch of the clone at top back to origin.
// History there is forward only, so this never needs a force; a remote
// whose branch moved on its own refuses, and the caller keeps its copy.
func (r Remote) Push(ctx context.Context, top, origin string) error {
	u, pin, err := r.check(ctx, origin)
	if err != nil {
		return err
	}
	defer lock(filepath.Join(top, WorktreeDir))()
	ref := "refs/heads/" + Branch
	if _, err := remoteGit(ctx, top, u.Scheme, pin, "push", "--quiet", "--", u.String(), ref+":"+ref); err != nil {
		return fmt.Errorf("push %s to %s: %v", Branch, redact(u), gitWords(err))
	}
	return nil
}

// check parses a URL and, for http(s), resolves and checks its host. pin
// is the curl resolve entry that holds git to the checked addresses.
func (r Remote) check(ctx context.Context, raw string) (u *url.URL, pin string, err error) {
	if scpLike.MatchString(raw) && !strings.Contains(raw, "://") {
		return nil, "", domain.Invalid("repo", "%q: ssh repositories are not supported; give an https:// or file:// URL", raw)
	}
	u, err = url.Parse(raw)
	if err != nil {
		return nil, "", domain.Invalid("repo", "%q is not a URL: %v", raw, err)
	}
	if _, ok := u.User.Password(); ok {
		return nil, "", domain.Invalid("repo", "%s: credentials in the URL are refused; the server clones only what it may read without any", redact(u))
	}
	switch u.Scheme {
	case "file":
		if u.Host != "" && u.Host != "localhost" {
			return nil, "", domain.Invalid("repo", "%q: a file URL names a path on this machine (file:///path)", raw)
		}
		if err := underRoots("repo", u.Path, r.Roots); err != nil {
			return nil, "", err
		}
		// Cloned from and pushed to: its config must not run code either.
		if err := checkConfig(ctx, u.Path, "repo"); err != nil {
			return nil, "", err
		}
		return u, "", nil
	case "http", "https":
	default:
		return nil, "", domain.Invalid("repo", "%q: scheme %q is not supported; give an https://, http:// or file:// URL", raw, u.Scheme)
	}
	if u.Hostname() == "" {
		return nil, "", domain.Invalid("repo", "%q has no host", raw)
	}
	addrs, err := r.addrs(ctx, u.Hostname())
	if err != nil {
		return nil, "", domain.Invalid("repo", "%s: %v", redact(u), err)
	}
	if !r.AllowPrivate {
		for _, a := range addrs {
			if err := safedial.Check(a); err != nil {
				return nil, "", domain.Invalid("repo", "%s: %v (the setting %s allows it)", redact(u), err, AllowPrivateKey)
			}
		}
	}
	if _, err := netip.ParseAddr(u.Hostname()); err == nil {
		return u, "", nil // nothing to resolve, nothing to pin
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	var list []string
	for _, a := range addrs {
		if a.Is6() && !a.Is4In6() {
			list = append(list, "["+a.String()+"]")
		} else {
			list = append(list, a.Unmap().String())
		}
	}
	return u, u.Hostname() + ":" + port + ":" + strings.Join(list, ","), nil
}

// AllowPrivateKey is the setting that sets Remote.AllowPrivate; named
// here so a refusal can say how to lift it.
const AllowPrivateKey = "spec_tasks.allow_private"

func (r Remote) addrs(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil
	}
	res := r.Resolver
	if res == nil {
		res = net.DefaultResolver
	}
	addrs, err := res.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", host, err)
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("resolve %s: no address", host)
	}
	return addrs, nil
}

// remoteGit runs a git command that talks to a remote: only the URL's own
// protocol, no redirects, no proxy, no prompt for credentials. A file://
// remote's side runs as a process of its own, without our -c overrides,
// so it is told to run no hooks either.
func remoteGit(ctx context.Context, dir, scheme, pin string, args ...string) (string, error) {
	return remoteGitEnv(ctx, dir, scheme, pin, nil, args...)
}

// PushBranch pushes a branch of the repository at top to origin, to the
// branch of the same name. config ("key=value") reaches git through
// GIT_CONFIG_* variables, never the command line, which every user of
// the host can read: the forge credential as http.extraHeader.
func (r Remote) PushBranch(ctx context.Context, top, origin, branch string, config ...string) error {
	u, pin, err := r.check(ctx, origin)
	if err != nil {
		return err
	}
	config = append([]string{"safe.directory=" + top}, config...)
	env := []string{fmt.Sprintf("GIT_CONFIG_COUNT=%d", len(config))}
	for i, kv := range config {
		k, v, _ := strings.Cut(kv, "=")
		env = append(env, fmt.Sprintf("GIT_CONFIG_KEY_%d=%s", i, k), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", i, v))
	}
	ref := "refs/heads/" + branch
	if _, err := remoteGitEnv(ctx, top, u.Scheme, pin, env, "push", "--quiet", "--", u.String(), ref+":"+ref); err != nil {
		return fmt.Errorf("push %s to %s: %v", branch, redact(u), gitWords(err))
	}
	return nil
}

func remoteGitEnv(ctx context.Context, dir, scheme, pin string, env []string, args ...string) (string, error) {
	pre := []string{"-c", "protocol." + scheme + ".allow=always", "-c", "http.followRedirects=false", "-c", "http.proxy="}
	if pin != "" {
		pre = append(pre, "-c", "http.curloptResolve="+pin)
	}
	if scheme == "file" {
		const safe = "git -c core.hooksPath=/dev/null -c core.fsmonitor=false "
		side := map[string]string{"clone": "--upload-pack=" + safe + "upload-pack", "push": "--receive-pack=" + safe + "receive-pack"}[args[0]]
		args = append([]string{args[0], side}, args[1:]...)
	}
	cmd := Command(ctx, dir, append(pre, args...)...)
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("git %s: %w: %s", args[0], err, strings.TrimSpace(string(out)))
	}
	return strings.TrimSpace(string(out)), nil
}

// gitWords is what git said, without our wrapping.
func gitWords(err error) string {
	msg := err.Error()
	if _, after, ok := strings.Cut(msg, ": exit status "); ok {
		if _, words, ok := strings.Cut(after, ": "); ok {
			msg = words
		}
	}
	var lines []string
	for l := range strings.SplitSeq(msg, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "hint:") {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "; ")
}

// cloneName is a readable and unique directory name for a URL.
func cloneName(u *url.URL) string {
	sum := sha256.Sum256([]byte(u.String()))
	base := strings.TrimSuffix(filepath.Base(u.Path), ".git")
	base = regexp.MustCompile(`[^A-Za-z0-9._-]+`).ReplaceAllString(u.Hostname()+"-"+base, "-")
	return strings.Trim(base, "-.") + "-" + hex.EncodeToString(sum[:6])
}

// redact shows a URL without its user info.
func redact(u *url.URL) string {
	c := *u
	c.User = nil
	return c.String()
}
