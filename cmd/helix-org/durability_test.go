package main

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/tools"
)

// until polls cond every 20ms for up to d: the thing waited on happens in
// another process, so there is no in-process signal to wait for. On a
// timeout it fails with what each explain says (logs, say), which names
// where the other process got stuck.
func until(t *testing.T, d time.Duration, what string, cond func() bool, explain ...func() string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			var why strings.Builder
			for _, e := range explain {
				why.WriteString("\n" + e())
			}
			t.Fatalf("timed out after %s waiting for %s%s", d, what, why.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startBinary runs this test binary as the real `helix-org serve`; extra
// flags come after the defaults, so they win.
func startBinary(t *testing.T, db, envs, addr string, extra ...string) *exec.Cmd {
	t.Helper()
	return startBinaryIn(t, "", addr, append([]string{"--db", db, "--envs-dir", envs, "--shutdown-grace", "5s"}, extra...)...)
}

// startBinaryIn runs `helix-org serve --addr addr args…` in dir (the
// test's own working directory when empty) and waits until it answers.
func startBinaryIn(t *testing.T, dir, addr string, args ...string) *exec.Cmd {
	t.Helper()
	exe, _ := os.Executable()
	cmd := exec.Command(exe, append([]string{"serve", "--addr", addr}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HELIX_ORG_TEST_MAIN=1")
	// What it says, kept for a start that never becomes healthy.
	out, err := os.CreateTemp(t.TempDir(), "serve-*.log")
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	until(t, time.Minute, "server health", healthy(addr), func() string {
		log, _ := os.ReadFile(out.Name())
		return "serve said:\n" + string(log)
	})
	return cmd
}

type handledLine struct {
	state, activation string
	events            []string
}

func readHandled(t *testing.T, path string) []handledLine {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []handledLine
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.Fields(sc.Text())
		l := handledLine{state: parts[0], activation: parts[1]}
		if len(parts) > 2 {
			l.events = strings.Split(parts[2], ",")
		}
		out = append(out, l)
	}
	return out
}

// TestDurabilityAcrossSIGKILL publishes a burst to the real binary, kills
// it with SIGKILL in the middle of a run, restarts it, and checks that
// every trigger reached a finished activation, duplicates only for the run
// that was cut off.
func TestDurabilityAcrossSIGKILL(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db, envs, addr := filepath.Join(dir, "helix-org.db"), filepath.Join(dir, "envs"), freeAddr(t)
	ctx := t.Context()
	st, err := store.Open(ctx, db, store.Options{Transports: transports.Specs()})
	if err != nil {
		t.Fatal(err)
	}
	st.Bootstrap(ctx, tools.Names())
	st.CreateRole(ctx, "w-owner", domain.Role{ID: "r-slow", Title: "Slow", Content: "Take your time."})
	st.CreatePosition(ctx, "w-owner", domain.Position{ID: "p-slow", RoleID: "r-slow", Title: "Slow"})
	st.CreateStream(ctx, "w-owner", domain.Stream{ID: "s-burst", Name: "burst", Transport: domain.Transport{Kind: domain.TransportLocal}})
	if _, err := st.HireWorker(ctx, "w-owner", domain.Worker{ID: "w-slow", Kind: domain.WorkerAI, PositionID: "p-slow", Name: "Slow"}, nil); err != nil {
		t.Fatal(err)
	}
	st.Subscribe(ctx, "w-owner", "s-burst", "w-slow")
	st.SetSetting(ctx, agent.RuntimeSetting, agent.RuntimeCommand)
	st.SetSetting(ctx, agent.CommandSetting, agentCommand(t, "slow"))
	os.MkdirAll(envs, 0o700)
	shareWithAgents(t, st, envs) // for ../handled.log and ../release
	tok := servertest.Token(t, st, "w-owner")
	st.Close()
	release := filepath.Join(envs, "release")
	handled := filepath.Join(envs, "handled.log")

	// First life: the hire activation runs through; then hold runs.
	os.WriteFile(release, nil, 0o600)
	srv := startBinary(t, db, envs, addr)
	until(t, time.Minute, "the hire activation", func() bool {
		return slices.ContainsFunc(readHandled(t, handled), func(l handledLine) bool { return l.state == "done" })
	})
	os.Remove(release)
	owner, err := servertest.Dial(t, "http://"+addr+"/workers/w-owner/mcp", tok)
	if err != nil {
		t.Fatal(err)
	}
	var published []string
	for i := range 20 {
		ev := servertest.Call[domain.Event](t, owner, "publish", map[string]any{"stream": "s-burst", "body": fmt.Sprintf("burst %d", i)})
		published = append(published, ev.ID)
	}
	until(t, time.Minute, "a run holding burst events", func() bool {
		return slices.ContainsFunc(readHandled(t, handled), func(l handledLine) bool { return l.state == "start" && len(l.events) > 0 })
	})
	srv.Process.Signal(syscall.SIGKILL)
	srv.Wait()

	// Second life: recovery runs what was cut off, and the rest.
	os.WriteFile(release, nil, 0o600)
	srv = startBinary(t, db, envs, addr)
	st, err = store.Open(ctx, db, store.Options{Transports: transports.Specs()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	until(t, 30*time.Second, "all triggers delivered", func() bool {
		n, err := st.PendingTriggers(ctx)
		return err == nil && n == 0
	})

	acts, err := st.ListActivations(ctx, "w-slow")
	if err != nil {
		t.Fatal(err)
	}
	status := map[string]domain.ActivationStatus{}
	var interrupted []string
	for _, a := range acts {
		status[a.ID] = a.Status
		if a.Status == domain.ActivationInterrupted {
			interrupted = append(interrupted, a.ID)
		}
	}
	if len(interrupted) != 1 {
		t.Errorf("interrupted activations = %v, want exactly the one SIGKILL cut off", interrupted)
	}
	delivered := map[string]int{}
	cutOff := map[string]bool{}
	for _, l := range readHandled(t, handled) {
		switch {
		case l.state == "done" && status[l.activation] == domain.ActivationSucceeded:
			for _, e := range l.events {
				delivered[e]++
			}
		case l.state == "start" && status[l.activation] == domain.ActivationInterrupted:
			for _, e := range l.events {
				cutOff[e] = true
			}
		}
	}
	for _, id := range published {
		switch n := delivered[id]; {
		case n == 0:
			t.Errorf("event %s never reached a finished activation", id)
		case n > 1 && !cutOff[id]:
			t.Errorf("event %s delivered %d times though its run was not cut off", id, n)
		}
	}

	// SIGTERM stops it cleanly.
	srv.Process.Signal(syscall.SIGTERM)
	if err := srv.Wait(); err != nil {
		t.Errorf("serve after SIGTERM: %v", err)
	}
}

// waitHealthy waits until the server at addr answers /healthz.
func waitHealthy(t *testing.T, addr string) {
	t.Helper()
	until(t, time.Minute, "server health", healthy(addr))
}

// healthy reports whether addr's /healthz answers 200.
func healthy(addr string) func() bool {
	return func() bool {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}
}
