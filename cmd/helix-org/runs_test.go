package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/dispatch"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
	"github.com/helixml/helix-org/tools"
	"github.com/helixml/helix-org/transports/webhook"
)

// runsOrg seeds an org with a role and position for AI workers.
func runsOrg(t *testing.T, st *store.Store) {
	t.Helper()
	ctx := t.Context()
	if _, err := st.Bootstrap(ctx, tools.Names()); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateRole(ctx, "w-owner", domain.Role{ID: "r-reader", Title: "Reader", Content: "Read everything."}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreatePosition(ctx, "w-owner", domain.Position{ID: "p-reader", RoleID: "r-reader", Title: "Reader"}); err != nil {
		t.Fatal(err)
	}
}

func hireAI(t *testing.T, st *store.Store, id string, streams ...string) {
	t.Helper()
	if _, err := st.HireWorker(t.Context(), "w-owner", domain.Worker{ID: id, Kind: domain.WorkerAI, PositionID: "p-reader", Name: id}, nil); err != nil {
		t.Fatal(err)
	}
	for _, s := range streams {
		if _, err := st.Subscribe(t.Context(), "w-owner", s, id); err != nil {
			t.Fatal(err)
		}
	}
}

// logText is a worker's activation log as "kind: text" lines.
func logText(t *testing.T, st *store.Store, worker string) string {
	t.Helper()
	evs, err := st.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{domain.ActivationStreamPrefix + worker}, Limit: 10000})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, ev := range evs {
		b.WriteString(ev.Message.Subject + ": " + ev.Message.Body + "\n")
	}
	return b.String()
}

// TestLargePromptsReachClaudeCode: the claude runtime hands Claude Code
// its prompt on stdin, so a prompt over the kernel's 128 KiB cap on one
// argument reaches it whole — 1,000 small events coalesced into one run,
// and one 200 KiB webhook. The fake claude reports what it read on the
// activation log, as Claude Code's stream-json would.
func TestLargePromptsReachClaudeCode(t *testing.T) {
	rec := fakeClaudeOnPath(t)
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "helix-org.db"), store.Options{Transports: transports.Specs(), Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := t.Context()
	runsOrg(t, st)
	st.SetSetting(ctx, agent.RuntimeSetting, agent.RuntimeClaude)
	shareWithAgents(t, st, filepath.Dir(rec))
	st.CreateStream(ctx, "w-owner", domain.Stream{ID: "s-small", Name: "small", Transport: domain.Transport{Kind: domain.TransportLocal}})
	st.CreateStream(ctx, "w-owner", domain.Stream{ID: "s-hook", Name: "hook", Transport: domain.Transport{Kind: webhook.Kind, Config: []byte(`{}`)}})
	hireAI(t, st, "w-reader", "s-small", "s-hook")
	// Queued before the server starts, so one run takes them all.
	var small []string
	for i := range 1000 {
		small = append(small, fmt.Sprintf("small event %04d", i))
		if _, err := st.Append(ctx, domain.Event{StreamID: "s-small", Message: domain.Message{Body: small[i]}}, store.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	base, _, _ := startServe(t, st, io.Discard)
	waitIdle(t, st)
	acts, _ := st.ListActivations(ctx, "w-reader")
	if len(acts) != 1 || acts[0].Status != domain.ActivationSucceeded || len(acts[0].TriggerIDs) != 1001 {
		t.Fatalf("activations = %+v; want one that succeeded with the hire and the 1,000 events", acts)
	}
	wantAll(t, "activation log", logText(t, st, "w-reader"), "assistant: read ", " bytes on stdin: "+bodiesDigest(small))

	var big strings.Builder
	for i := 0; big.Len() < 200<<10; i++ {
		fmt.Fprintf(&big, "line %05d of a large webhook, padded to make it long enough to matter ........\n", i)
	}
	body := strings.TrimSuffix(big.String(), "\n")
	if code, resp := postWebhook(t, base, "s-hook", "", "big-1", "text/plain", body, time.Now()); code != http.StatusOK {
		t.Fatalf("webhook: %d %s", code, resp)
	}
	waitIdle(t, st)
	acts, _ = st.ListActivations(ctx, "w-reader")
	if len(acts) != 2 || acts[1].Status != domain.ActivationSucceeded {
		t.Fatalf("activations = %+v; want a second that succeeded", acts)
	}
	wantAll(t, "activation log", logText(t, st, "w-reader"), fmt.Sprintf("bytes on stdin: %s", bodiesDigest([]string{body})))
	data, _ := os.ReadFile(rec)
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if !strings.Contains(line, "args=-p --input-format stream-json --mcp-config mcp.json") || strings.Contains(line, "small event") || len(line) > 4096 {
			t.Errorf("claude ran as %.300q; want the prompt on stdin, not in its arguments", line)
		}
	}
}

// waitFor waits, on store commits (and a poll for changes other
// processes make), until cond holds.
func waitFor(t *testing.T, st *store.Store, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for !cond() {
		select {
		case <-st.Changed():
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// runTriggers executes the triggers command on its own (see runActivations).
func runTriggers(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := newTriggersCmd()
	var out bytes.Buffer
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	err := cmd.ExecuteContext(t.Context())
	return out.String(), err
}

// TestFailedStartsRetryParkAndRelease: with the claude runtime chosen and
// no claude on PATH, the real server's dispatcher retries the hire
// trigger on a backoff (driven by the store's clock), parks it after
// dispatch.max_start_attempts and says so; `helix-org triggers` shows it;
// once claude is installed, `triggers release` runs it.
func TestFailedStartsRetryParkAndRelease(t *testing.T) {
	bin := t.TempDir()
	t.Setenv("PATH", bin)
	clock := storetest.NewClock(time.Now())
	db := filepath.Join(t.TempDir(), "helix-org.db")
	st, err := store.Open(t.Context(), db, store.Options{Transports: transports.Specs(), Synchronous: "NORMAL", Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := t.Context()
	runsOrg(t, st)
	st.SetSetting(ctx, agent.RuntimeSetting, agent.RuntimeClaude)
	st.SetSetting(ctx, dispatch.MaxStartAttemptsSetting, "3")
	startServe(t, st, io.Discard)
	hireAI(t, st, "w-reader")

	trigger := func() domain.QueuedTrigger {
		qs, err := st.ListTriggers(ctx, store.TriggerQuery{Worker: "w-reader"})
		if err != nil || len(qs) != 1 {
			t.Fatalf("triggers = %+v, %v", qs, err)
		}
		return qs[0]
	}
	for attempt, wait := range []time.Duration{10 * time.Second, 20 * time.Second} {
		waitFor(t, st, fmt.Sprintf("failed start %d", attempt+1), func() bool { return trigger().Attempts == attempt+1 })
		if q := trigger(); q.Status != domain.TriggerPending || q.NotBefore == nil || q.NotBefore.Sub(clock.Now()) != wait {
			t.Errorf("after failed start %d: %+v; want pending until %s from now", attempt+1, q, wait)
		}
		clock.Advance(wait)
	}
	waitFor(t, st, "the trigger parked", func() bool { return trigger().Status == domain.TriggerParked })

	out, err := runTriggers(t, "--db", db)
	if err != nil {
		t.Fatal(err)
	}
	wantAll(t, "triggers", out, "ID  WORKER    STATUS  KIND  EVENT", "w-reader  parked  hire", "  3  ", "the agent failed to start 3 time(s): claude runtime: \"claude\" not found on PATH")
	out, _ = runTriggers(t, "--db", db, "--json")
	var listed struct{ Triggers []domain.QueuedTrigger }
	if err := json.Unmarshal([]byte(out), &listed); err != nil || len(listed.Triggers) != 1 || listed.Triggers[0].Status != domain.TriggerParked ||
		listed.Triggers[0].Attempts != 3 || !strings.Contains(listed.Triggers[0].LastError, "not found on PATH") {
		t.Errorf("triggers --json = %s (%v)", out, err)
	}
	wantAll(t, "activations", runActivations(t, "--db", db), "failed", "did not start: claude runtime")
	wantAll(t, "activation log", logText(t, st, "w-reader"), "retry: the agent did not start (attempt 1 of 3)", "retry: the agent did not start (attempt 2 of 3)",
		"parked: trigger(s) 1 parked: the agent failed to start 3 time(s)")

	if out, err := runTriggers(t, "release", "--db", db); err == nil || !strings.Contains(out, "name trigger ids") {
		t.Errorf("release with nothing named: %v\n%s", err, out)
	}
	if out, err := runTriggers(t, "release", "--db", db, "7"); err == nil || !strings.Contains(err.Error(), `trigger "7": not found`) {
		t.Errorf("release of an unknown trigger: %v\n%s", err, out)
	}
	shareWithAgents(t, st, filepath.Dir(writeFakeClaude(t, bin)))
	out, err = runTriggers(t, "release", "--db", db, "--worker", "w-reader")
	if err != nil || !regexp.MustCompile(`^Released trigger 1 \(w-reader, hire event e-\S+ on s-org\)\n$`).MatchString(out) {
		t.Fatalf("release: %v\n%s", err, out)
	}
	waitFor(t, st, "the released trigger to run", func() bool { return trigger().Status == domain.TriggerDone })
	acts, _ := st.ListActivations(ctx, "w-reader")
	statuses := map[domain.ActivationStatus]int{}
	for _, a := range acts {
		statuses[a.Status]++
	}
	if len(acts) != 4 || statuses[domain.ActivationFailed] != 3 || statuses[domain.ActivationSucceeded] != 1 {
		t.Errorf("activations = %+v; want three that did not start and one that succeeded", acts)
	}
	if out, _ := runTriggers(t, "--db", db); out != "No triggers waiting.\n" {
		t.Errorf("triggers after the run:\n%s", out)
	}
}

// TestOrphanedAgentIsKilledBeforeItsRerun: SIGKILL the real binary while a
// host agent runs; the agent, in its sandbox, outlives it. The restarted
// server kills its process group before the interrupted run's trigger runs
// again: the re-run, as it starts, sees no earlier agent alive.
func TestOrphanedAgentIsKilledBeforeItsRerun(t *testing.T) {
	dir := t.TempDir()
	db, envs, addr := filepath.Join(dir, "helix-org.db"), filepath.Join(dir, "envs"), freeAddr(t)
	st, err := store.Open(t.Context(), db, store.Options{Transports: transports.Specs()})
	if err != nil {
		t.Fatal(err)
	}
	runsOrg(t, st)
	st.SetSetting(t.Context(), agent.RuntimeSetting, agent.RuntimeCommand)
	st.SetSetting(t.Context(), agent.CommandSetting, agentCommand(t, "stubborn"))
	shareWithAgents(t, st, envs) // for ../order.log, ../pids and ../release
	hireAI(t, st, "w-stubborn")
	st.Close()
	os.MkdirAll(envs, 0o700)
	killRecordedAgents(t, db, "w-stubborn")
	started := func() []string {
		data, _ := os.ReadFile(filepath.Join(envs, "order.log"))
		return strings.Split(strings.TrimSpace(string(data)), "\n")
	}
	st, err = store.Open(t.Context(), db, store.Options{Transports: transports.Specs()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	srv := startBinary(t, db, envs, addr)
	until(t, time.Minute, "the agent's start", func() bool { return len(started()) == 1 && started()[0] != "" })
	acts, _ := st.ListActivations(t.Context(), "w-stubborn")
	if len(acts) != 1 || acts[0].Process == nil {
		t.Fatalf("activations = %+v; want one with its agent's process group", acts)
	}
	first := acts[0].Process.PGID
	srv.Process.Signal(syscall.SIGKILL)
	srv.Wait()
	if len(groupMembers(first)) == 0 {
		t.Fatal("the agent died with its server; this test needs one that outlives it")
	}

	srv = startBinary(t, db, envs, addr)
	until(t, time.Minute, "the re-run's start", func() bool { return len(started()) == 2 })
	if left := groupMembers(first); len(left) > 0 {
		t.Errorf("the orphaned agent's process group %d still has %v after the restart", first, left)
	}
	if rerun := started()[1]; !strings.HasSuffix(rerun, "alive=") {
		t.Errorf("the re-run started as %q: the orphan was still alive then", rerun)
	}
	os.WriteFile(filepath.Join(envs, "release"), nil, 0o600)
	until(t, time.Minute, "the re-run to finish", func() bool {
		acts, _ := st.ListActivations(t.Context(), "w-stubborn")
		return len(acts) == 2 && acts[1].Status == domain.ActivationSucceeded
	})
	if acts, _ := st.ListActivations(t.Context(), "w-stubborn"); acts[0].Status != domain.ActivationInterrupted || acts[0].Process == nil || acts[0].Process.PGID != first {
		t.Errorf("the cut-off activation = %+v; want interrupted, with the orphan's process group %d", acts[0], first)
	}
	srv.Process.Signal(syscall.SIGTERM)
	if err := srv.Wait(); err != nil {
		t.Errorf("serve after SIGTERM: %v", err)
	}
}
