package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/helixml/helix-org/domain"
)

// served is a helix-org serve this tool started as a process of its own,
// from a binary it was given (the comparison's), over a database in dir.
type served struct {
	cmd        *exec.Cmd
	dir        string
	url, token string
	// coldStart is exec to the first MCP answer.
	coldStart time.Duration
	exited    chan error
}

// bootstrap creates a database in dir with bin and returns the owner's
// token, which bin prints once.
func bootstrap(ctx context.Context, bin, dir string) (string, error) {
	out, err := exec.CommandContext(ctx, bin, "bootstrap", "--init", "--db", filepath.Join(dir, "org.db")).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s bootstrap: %w: %s", bin, err, out)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 2 && f[0] == "Token:" {
			return f[1], nil
		}
	}
	return "", fmt.Errorf("%s bootstrap printed no token:\n%s", bin, out)
}

// startServe execs bin serve on dir's database and a free loopback port,
// and times it to its first answer: a tools/call (get_worker of the
// owner) posted as soon as the port takes a connection. serve binds the
// port before anything else, so the call waits in the listen queue while
// the process readies itself.
func startServe(ctx context.Context, bin, dir, token string) (*served, error) {
	addr, err := freePort()
	if err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(dir, "serve.log"))
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd := exec.Command(bin, "serve", "--db", filepath.Join(dir, "org.db"), "--addr", addr,
		"--envs-dir", filepath.Join(dir, "envs"), "--log-level", "warn")
	cmd.Stdout, cmd.Stderr = logf, logf
	// The binaries run with their own defaults, not this shell's tuning.
	cmd.Env = withoutEnv(os.Environ(), "GOGC", "GOMEMLIMIT", "GODEBUG", "MALLOC_ARENA_MAX")
	s := &served{cmd: cmd, dir: dir, url: domain.MCPURL("http://"+addr, "w-owner"), token: token, exited: make(chan error, 1)}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	go func() { s.exited <- cmd.Wait() }()
	c := newWireClient(s.url, token)
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		err = c.call(ctx, "get_worker", map[string]any{"id": "w-owner"})
		if err == nil {
			s.coldStart = time.Since(start)
			return s, nil
		}
		if !errors.Is(err, syscall.ECONNREFUSED) || ctx.Err() != nil {
			s.stop()
			log, _ := os.ReadFile(logf.Name())
			return nil, fmt.Errorf("%s serve: first call: %w\n%s", bin, err, log)
		}
		select {
		case err := <-s.exited:
			log, _ := os.ReadFile(logf.Name())
			return nil, fmt.Errorf("%s serve exited: %v\n%s", bin, err, log)
		case <-time.After(200 * time.Microsecond): // the port is not bound yet
		}
	}
}

// rssMB is the process's resident memory now, and the part of it that
// is files mapped (its binary, mostly), from /proc.
func (s *served) rssMB() (rss, file float64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return 0, 0, err
	}
	kb := func(field string) (float64, error) {
		for line := range strings.Lines(string(b)) {
			if v, ok := strings.CutPrefix(line, field+":"); ok {
				n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
				return float64(n) / 1024, err
			}
		}
		return 0, fmt.Errorf("no %s in /proc status", field)
	}
	if rss, err = kb("VmRSS"); err == nil {
		file, err = kb("RssFile")
	}
	return rss, file, err
}

// stop ends the server as an operator would (SIGTERM), killing it if it
// has not gone in 30 seconds.
func (s *served) stop() {
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(30 * time.Second):
		s.cmd.Process.Kill()
		<-s.exited
	}
}

func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func withoutEnv(env []string, names ...string) []string {
	out := env[:0:0]
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(names, name) {
			out = append(out, kv)
		}
	}
	return out
}
