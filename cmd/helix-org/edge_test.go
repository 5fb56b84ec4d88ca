package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/tools"
	"github.com/helixml/helix-org/transports/github"
	"github.com/helixml/helix-org/transports/webhook"
)

// maxInboundRSS is the documented bound (docs/security.md, Inbound memory) on the
// server's peak resident memory under a storm of 25 MiB inbound bodies,
// with the default inbound budget of 64 MiB.
const maxInboundRSS = 150 << 20

const edgeGitHubSecret = "edge-test-github-secret"

// edgeServer is the real binary serving an org with an owner, a github
// stream for helixml/docs and transport.github's secret set.
type edgeServer struct {
	cmd   *exec.Cmd
	base  string
	token string
	st    *store.Store
}

// startEdgeServer runs exe as `helix-org serve` with flags; exe "" runs
// this test binary as the real one.
func startEdgeServer(t *testing.T, exe string, flags ...string) edgeServer {
	t.Helper()
	dir := t.TempDir()
	db, envs, addr := filepath.Join(dir, "helix-org.db"), filepath.Join(dir, "envs"), freeAddr(t)
	ctx := t.Context()
	st, err := store.Open(ctx, db, store.Options{Transports: transports.Specs()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := st.Bootstrap(ctx, tools.Names()); err != nil {
		t.Fatal(err)
	}
	if err := st.SetSetting(ctx, github.ConfigSetting, `{"webhook_secret":"`+edgeGitHubSecret+`"}`); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateStream(ctx, "w-owner", domain.Stream{ID: "s-docs", Name: "docs", Transport: domain.Transport{Kind: github.Kind,
		Config: []byte(`{"repo":"helixml/docs","events":["issues"]}`)}}); err != nil {
		t.Fatal(err)
	}
	tok := servertest.Token(t, st, "w-owner")
	if exe == "" {
		exe, _ = os.Executable()
	}
	args := append([]string{"serve", "--db", db, "--envs-dir", envs, "--addr", addr, "--shutdown-grace", "1s"}, flags...)
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), "HELIX_ORG_TEST_MAIN=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	waitHealthy(t, addr)
	return edgeServer{cmd: cmd, base: "http://" + addr, token: tok, st: st}
}

// buildBinary builds helix-org as `make build` does — no race detector,
// whose shadow memory would swamp a memory measurement — and returns its path.
func buildBinary(t *testing.T) string {
	t.Helper()
	gotool, err := exec.LookPath("go")
	if err != nil {
		gotool = "/usr/local/go/bin/go" // where CI installs it (.ci/run)
	}
	out := filepath.Join(t.TempDir(), "helix-org")
	build := exec.Command(gotool, "build", "-o", out, ".")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	return out
}

// memory reads the server's current and peak resident set, in bytes.
func (s edgeServer) memory(t *testing.T) (rss, peak int64) {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			rss = kb << 10
		case "VmHWM:":
			peak = kb << 10
		}
	}
	return rss, peak
}

// openFiles is how many sockets the server holds.
func (s edgeServer) openFiles(t *testing.T) int {
	t.Helper()
	dir := fmt.Sprintf("/proc/%d/fd", s.cmd.Process.Pid)
	fds, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	// Sockets only: the database pool opens and closes file descriptors
	// of its own as the server's loops (dispatcher, deliveries, schedule)
	// read concurrently at start-up.
	n := 0
	for _, fd := range fds {
		if link, err := os.Readlink(filepath.Join(dir, fd.Name())); err == nil && strings.HasPrefix(link, "socket:") {
			n++
		}
	}
	return n
}

// mcpCall makes one real MCP call as the owner, over a fresh client.
func (s edgeServer) mcpCall(t *testing.T) {
	t.Helper()
	cs, err := servertest.Dial(t, s.base+"/workers/w-owner/mcp", s.token)
	if err != nil {
		t.Fatalf("MCP connect: %v", err)
	}
	defer cs.Close()
	servertest.Call[any](t, cs, "list_streams", nil)
}

// storm sends n concurrent POSTs of body to /github/webhook with the given
// signature ("" for none) and tallies the answers: status codes, and
// "conn" for a connection the server closed before answering.
func (s edgeServer) storm(t *testing.T, n int, body []byte, signature string) map[string]int {
	t.Helper()
	var mu sync.Mutex
	got := map[string]int{}
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			req, _ := http.NewRequest(http.MethodPost, s.base+"/github/webhook", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-GitHub-Event", "issues")
			req.Header.Set("X-GitHub-Delivery", "storm")
			if signature != "" {
				req.Header.Set(github.SignatureHeader, signature)
			}
			key := "conn"
			if resp, err := http.DefaultClient.Do(req); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				key = strconv.Itoa(resp.StatusCode)
			}
			mu.Lock()
			got[key]++
			mu.Unlock()
		})
	}
	wg.Wait()
	return got
}

// TestInboundMemoryIsBounded: forty concurrent 25 MiB GitHub deliveries —
// unsigned, then in four waves of ten with a well-formed but wrong
// signature — keep the real server's peak RSS under maxInboundRSS.
// Unsigned ones are refused before a byte of their body is read; signed
// ones are read only as far as the inbound budget allows, the rest
// answered 503, and a wave's refused bodies count against the budget
// until collected, so they do not pile up behind the next. A real
// delivery and a real MCP call succeed afterwards. (Before the budget:
// 22 MiB → 1.2 GiB; before collected bodies counted, 52 → 203 MiB.) The
// server is the binary `make build` makes, measured from /proc.
func TestInboundMemoryIsBounded(t *testing.T) {
	s := startEdgeServer(t, buildBinary(t))
	s.mcpCall(t)
	rss0, _ := s.memory(t)
	body := bytes.Repeat([]byte("x"), github.DefaultMaxBody)
	unsigned := s.storm(t, 40, body, "")
	rss1, peak1 := s.memory(t)
	wrong := map[string]int{}
	for range 4 { // in waves, so that bodies read and refused are followed by more
		for k, n := range s.storm(t, 10, body, "sha256="+strings.Repeat("0", 64)) {
			wrong[k] += n
		}
	}
	rss2, peak2 := s.memory(t)
	t.Logf("RSS before %d MiB; after 40 unsigned %d MiB (peak %d MiB) %v; after 40 wrongly signed %d MiB (peak %d MiB) %v",
		rss0>>20, rss1>>20, peak1>>20, unsigned, rss2>>20, peak2>>20, wrong)

	if unsigned["401"]+unsigned["conn"] != 40 || unsigned["401"] == 0 {
		t.Errorf("unsigned deliveries answered %v, want all refused with 401", unsigned)
	}
	if wrong["401"]+wrong["503"]+wrong["conn"] != 40 || wrong["401"] == 0 || wrong["503"] == 0 {
		t.Errorf("wrongly signed deliveries answered %v, want 401s for those read and 503s past the budget", wrong)
	}
	if peak2 > maxInboundRSS {
		t.Errorf("peak RSS %d MiB is over the documented bound of %d MiB", peak2>>20, maxInboundRSS>>20)
	}

	issue := []byte(`{"action":"opened","issue":{"number":1,"title":"After the storm","body":"still here"},"repository":{"full_name":"helixml/docs"}}`)
	req, _ := http.NewRequest(http.MethodPost, s.base+"/github/webhook", bytes.NewReader(issue))
	req.Header.Set("X-GitHub-Event", "issues")
	req.Header.Set("X-GitHub-Delivery", "d-real")
	req.Header.Set(github.SignatureHeader, github.Sign(edgeGitHubSecret, issue))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("a real delivery after the storm: %d, want 200", resp.StatusCode)
	}
	evs, err := s.st.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{"s-docs"}})
	if err != nil || len(evs) != 1 || evs[0].Message.Subject != "After the storm" {
		t.Errorf("s-docs holds %v (%v), want only the real delivery", evs, err)
	}
	s.mcpCall(t)
}

// TestInboundRefusedBeforeReading: a request missing what a transport
// requires — a signature, basic auth — is answered before any of its
// body is sent: the client declares a gigabyte and sends none of it.
func TestInboundRefusedBeforeReading(t *testing.T) {
	s := startEdgeServer(t, "")
	st, err := store.Open(t.Context(), s.st.Path(), store.Options{Transports: transports.Specs()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.CreateStream(t.Context(), "w-owner", domain.Stream{ID: "s-hook", Name: "hook", Transport: domain.Transport{
		Kind: webhook.Kind, Config: []byte(`{"secret":"whsec_c2VjcmV0LWtleS1mb3ItdGVzdHMtMTIzNDU2Nzg="}`)}}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, headers string
		want                string
	}{
		{"github, no signature", "/github/webhook", "X-GitHub-Event: issues\r\n", "401"},
		{"github, malformed signature", "/github/webhook", "X-GitHub-Event: issues\r\nX-Hub-Signature-256: sha256=abc\r\n", "401"},
		{"github, no event", "/github/webhook", "X-Hub-Signature-256: sha256=" + strings.Repeat("0", 64) + "\r\n", "400"},
		{"webhook with a secret, unsigned", "/webhooks/s-hook", "", "401"},
		{"webhook, stale timestamp", "/webhooks/s-hook", "webhook-id: m1\r\nwebhook-timestamp: 1\r\nwebhook-signature: v1,abc\r\n", "401"},
		{"webhook, declared over the limit", "/webhooks/s-hook", "webhook-id: m1\r\nwebhook-timestamp: " + strconv.FormatInt(time.Now().Unix(), 10) + "\r\nwebhook-signature: v1,abc\r\n", "413"},
		{"postmark, no basic auth", "/email/postmark", "", "401"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", strings.TrimPrefix(s.base, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n%s\r\n", tt.path, 1<<30, tt.headers)
			conn.SetReadDeadline(time.Now().Add(10 * time.Second))
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatalf("no answer without the body: %v", err)
			}
			resp.Body.Close()
			if got := strconv.Itoa(resp.StatusCode); got != tt.want {
				t.Errorf("answered %s, want %s", got, tt.want)
			}
		})
	}
}

// TestIdleConnectionsAreClosed: 1,000 idle keep-alive connections do not
// starve the server — a real MCP call succeeds while they are open — and
// the configured idle timeout closes every one of them.
func TestIdleConnectionsAreClosed(t *testing.T) {
	t.Parallel()
	// Long enough that opening 1,000 connections on a loaded machine ends
	// before the first of them idles out, so they can all be counted.
	const idle = 10 * time.Second
	s := startEdgeServer(t, "", "--idle-timeout", idle.String())
	before := s.openFiles(t)
	opened := time.Now()
	conns := make([]net.Conn, 1000)
	for i := range conns {
		c, err := net.Dial("tcp", strings.TrimPrefix(s.base, "http://"))
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		defer c.Close()
		fmt.Fprint(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.Close {
			t.Fatalf("connection %d was not kept alive", i)
		}
		conns[i] = c
	}
	open := s.openFiles(t)
	t.Logf("server fds: %d before, %d with 1000 idle keep-alives (opened in %s)", before, open, time.Since(opened))
	// At least the 1000: a socket open before (an earlier client's
	// keep-alive) may since have closed.
	if time.Since(opened) < idle && open < 1000 {
		t.Fatalf("the server holds %d fds, want the 1000 idle connections among them", open)
	}
	s.mcpCall(t)

	deadline := time.Now().Add(idle + 30*time.Second)
	for i, c := range conns {
		c.SetReadDeadline(deadline)
		if n, err := c.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
			t.Fatalf("idle connection %d: read %d bytes, %v; want it closed by the server", i, n, err)
		}
	}
	until(t, 10*time.Second, "the server to let go of the idle connections", func() bool { return s.openFiles(t) < before+50 })
	s.mcpCall(t)
}
