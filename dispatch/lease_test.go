package dispatch_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/dispatch"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

// TestLapsedLeaseFailsTheRunAndHandsBackItsTriggers: an activation whose
// server stopped renewing its lease (it died) is failed once the lease
// lapses, its trigger runs again, and the dead run's late completion
// changes nothing.
func TestLapsedLeaseFailsTheRunAndHandsBackItsTriggers(t *testing.T) {
	clock := storetest.NewClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	var killed []string
	f := newFixtureAt(t, nil, clock.Now, dispatch.Options{Kill: func(_ context.Context, a domain.Activation) error {
		killed = append(killed, a.ID)
		return nil
	}})
	ctx := t.Context()
	f.hire(t, "w-echo", domain.WorkerAI)
	f.settle(t)
	f.rec.reset()
	f.publish(t, "w-owner", "hello")
	act, _, _, err := f.st.Claim(ctx, "w-echo", "a-dead", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	f.st.StartActivation(ctx, act.ID, domain.AgentProcess{PGID: 4242, StartTicks: 1}, domain.Event{StreamID: domain.ActivationStreamPrefix + "w-echo", Message: domain.Message{Body: "start"}})
	if _, err := f.st.RenewLease(ctx, act.ID, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	clock.Advance(29 * time.Second)
	if err := f.d.ReapLapsed(ctx); err != nil {
		t.Fatal(err)
	}
	if a, _ := f.st.GetActivation(ctx, act.ID); a.Status != domain.ActivationRunning {
		t.Fatalf("reaped within its lease: %+v", a)
	}
	clock.Advance(2 * time.Second)
	if err := f.d.ReapLapsed(ctx); err != nil {
		t.Fatal(err)
	}
	a, err := f.st.GetActivation(ctx, act.ID)
	if err != nil || a.Status != domain.ActivationFailed || a.Error != "lease lapsed" || a.LeaseUntil != nil {
		t.Fatalf("after the lease lapsed: %+v, %v; want failed, lease lapsed", a, err)
	}
	if len(killed) != 1 || killed[0] != act.ID {
		t.Errorf("killed %v, want the orphan's process", killed)
	}
	// The dead run's completion comes late: the first outcome stands.
	late := a
	late.Status, late.Error = domain.ActivationSucceeded, ""
	if err := f.st.FinishActivation(ctx, late, domain.Event{StreamID: domain.ActivationStreamPrefix + "w-echo", Message: domain.Message{Body: "exit"}}); err != nil {
		t.Errorf("second FinishActivation = %v, want a no-op", err)
	}
	if a, _ := f.st.GetActivation(ctx, act.ID); a.Status != domain.ActivationFailed {
		t.Errorf("a late finish overwrote the outcome: %+v", a)
	}
	f.settle(t)
	if got := f.rec.workers(); len(got) != 1 || !strings.Contains(f.rec.runs[0].Prompt, "hello") {
		t.Errorf("runs after the reap = %v, want hello delivered again", got)
	}
	if log := strings.Join(activationLog(t, f.st, "w-echo"), "\n"); !strings.Contains(log, "exit: failed: lease lapsed; its trigger(s) run again") {
		t.Errorf("activation log lacks the reap:\n%s", log)
	}
}

// runServing runs the dispatcher's loop until the test ends.
func runServing(t *testing.T, d *dispatch.Dispatcher) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { d.Run(ctx); close(done) }()
	t.Cleanup(func() {
		cancel()
		sctx, stop := context.WithTimeout(context.Background(), 10*time.Second)
		defer stop()
		d.Shutdown(sctx)
		<-done
	})
}

// waitActivations waits, on store commits, until the worker's
// activations satisfy cond.
func waitActivations(t *testing.T, st *store.Store, worker string, cond func([]domain.Activation) bool) []domain.Activation {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		changed := st.Changed()
		acts, err := st.ListActivations(t.Context(), worker)
		if err != nil {
			t.Fatal(err)
		}
		if cond(acts) {
			return acts
		}
		select {
		case <-changed:
		case <-time.After(50 * time.Millisecond): // leases lapse without a commit
		case <-deadline:
			t.Fatalf("activations of %s never got there: %+v", worker, acts)
		}
	}
}

func ended(n int) func([]domain.Activation) bool {
	return func(acts []domain.Activation) bool {
		if len(acts) < n {
			return false
		}
		for _, a := range acts {
			if a.Status == domain.ActivationRunning {
				return false
			}
		}
		return true
	}
}

// TestLeaseIsHeldWhileTheAgentRuns: an agent running four lease periods
// keeps its lease and succeeds. The lease is long enough that a renewal
// late by a loaded machine's scheduling (two cores, every package's tests
// at once) still lands within it.
func TestLeaseIsHeldWhileTheAgentRuns(t *testing.T) {
	f := newFixtureAt(t, &agent.Command{Line: "sleep 2"}, nil, dispatch.Options{Tick: 20 * time.Millisecond, Alive: agent.Alive})
	f.st.SetSetting(t.Context(), dispatch.LeaseSetting, "500ms")
	runServing(t, f.d)
	f.hire(t, "w-echo", domain.WorkerAI)
	acts := waitActivations(t, f.st, "w-echo", ended(1))
	if acts[0].Status != domain.ActivationSucceeded {
		t.Errorf("activation = %+v, want succeeded", acts[0])
	}
}

// TestLateRenewalKeepsLiveWork: when a run's lease lapses here while its
// agent lives — the renewal came late, as on a stalled or overloaded
// machine — the reaper takes the lease back instead of failing the run
// and running its trigger a second time.
func TestLateRenewalKeepsLiveWork(t *testing.T) {
	clock := storetest.NewClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	rt := &hangOnce{stopped: make(chan struct{})}
	f := newFixtureAt(t, rt, clock.Now, dispatch.Options{Tick: 20 * time.Millisecond, Alive: func(string, domain.AgentProcess) bool { return true }})
	f.st.SetSetting(t.Context(), dispatch.LeaseSetting, "1m")
	runServing(t, f.d)
	f.hire(t, "w-echo", domain.WorkerAI)
	act := waitActivations(t, f.st, "w-echo", func(acts []domain.Activation) bool { return len(acts) == 1 && acts[0].Process != nil })[0]
	clock.Advance(2 * time.Minute) // past the lease, before a renewal (every 20 s) comes
	if err := f.d.ReapLapsed(t.Context()); err != nil {
		t.Fatal(err)
	}
	a, err := f.st.GetActivation(t.Context(), act.ID)
	if err != nil || a.Status != domain.ActivationRunning || a.LeaseUntil == nil || !a.LeaseUntil.After(clock.Now()) {
		t.Fatalf("after a late renewal: %+v, %v; want running with its lease taken back", a, err)
	}
	if acts, _ := f.st.ListActivations(t.Context(), "w-echo"); len(acts) != 1 {
		t.Errorf("activations = %d, want the one run (its trigger not run again)", len(acts))
	}
	// The operator ends it; its agent stops on the dispatcher's next step.
	if _, err := dispatch.CancelActivation(t.Context(), f.st, act.ID, "", true); err != nil {
		t.Fatal(err)
	}
	<-rt.stopped
}

// hangOnce is a runtime whose first run reports an agent process and then
// hangs until cancelled, as a run whose agent died but whose pipes stay
// open would; later runs succeed. stopped, if set, is closed when the
// hanging run returns.
type hangOnce struct {
	runs    atomic.Int32
	stopped chan struct{}
}

func (h *hangOnce) Run(ctx context.Context, run domain.Run) (domain.RunResult, error) {
	run.Started(domain.AgentProcess{PGID: 4242, StartTicks: 1})
	if h.runs.Add(1) > 1 {
		return domain.RunResult{}, nil
	}
	<-ctx.Done()
	if h.stopped != nil {
		close(h.stopped)
	}
	return domain.RunResult{ExitStatus: -1}, ctx.Err()
}

// TestDeadAgentIsReapedWithinTwoLeases: once its process is gone the
// lease is no longer renewed; the run is failed ("agent process died")
// within two lease periods and its trigger runs again.
func TestDeadAgentIsReapedWithinTwoLeases(t *testing.T) {
	// The reap comes at most a lease and a tick after the death; the
	// second lease is slack for a loaded machine's late ticks, so it is
	// not short.
	const lease = time.Second
	var dead atomic.Bool
	f := newFixtureAt(t, &hangOnce{}, nil, dispatch.Options{Tick: 20 * time.Millisecond,
		Alive: func(string, domain.AgentProcess) bool { return !dead.Load() }})
	f.st.SetSetting(t.Context(), dispatch.LeaseSetting, lease.String())
	runServing(t, f.d)
	f.hire(t, "w-echo", domain.WorkerAI)
	waitActivations(t, f.st, "w-echo", func(acts []domain.Activation) bool { return len(acts) == 1 && acts[0].Process != nil })
	dead.Store(true)
	died := time.Now()
	acts := waitActivations(t, f.st, "w-echo", func(acts []domain.Activation) bool {
		return len(acts) > 0 && acts[0].Status != domain.ActivationRunning
	})
	took := time.Since(died)
	t.Logf("reaped %s after the agent died (lease %s)", took.Round(time.Millisecond), lease)
	if acts[0].Status != domain.ActivationFailed || acts[0].Error != "agent process died" {
		t.Errorf("activation = %+v, want failed: agent process died", acts[0])
	}
	if took > 2*lease {
		t.Errorf("reaped after %s, more than two lease periods", took)
	}
	acts = waitActivations(t, f.st, "w-echo", ended(2))
	if acts[1].Status != domain.ActivationSucceeded {
		t.Errorf("re-run = %+v, want succeeded", acts[1])
	}
}

// TestAgentKilledBySignalRunsItsTriggersAgain: an agent killed by a signal
// nobody here sent (the OOM killer, kill -9) fails as "agent process died"
// and its triggers run again.
func TestAgentKilledBySignalRunsItsTriggersAgain(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "killed-once")
	f := newFixtureWith(t, &agent.Command{Line: fmt.Sprintf("if [ -e %[1]s ]; then exit 0; fi; touch %[1]s; kill -9 $$", marker)})
	f.st.SetSetting(t.Context(), dispatch.StartBackoffSetting, "0s")
	f.hire(t, "w-echo", domain.WorkerAI)
	f.settle(t)
	acts, err := f.st.ListActivations(t.Context(), "w-echo")
	if err != nil || len(acts) != 2 {
		t.Fatalf("activations = %+v, %v; want two", acts, err)
	}
	if acts[0].Status != domain.ActivationFailed || acts[0].Error != "agent process died: killed by a signal" || acts[1].Status != domain.ActivationSucceeded {
		t.Errorf("activations = %+v / %+v; want the killed run failed and the re-run succeeded", acts[0], acts[1])
	}
}

// TestRecoverAdoptsARunWhoseAgentLivesOn: at start-up a run that a crash
// cut off, whose agent goes on outside the server (Options.Adopts), is
// not interrupted and started anew: the runtime is run again with the
// same activation — and no token, its agent has one — and its end closes
// its triggers. Another run, not adoptable, is recovered as before.
func TestRecoverAdoptsARunWhoseAgentLivesOn(t *testing.T) {
	opts := dispatch.Options{Adopts: func(_ context.Context, a domain.Activation) bool {
		return a.Process != nil && a.Process.Runtime == "kubernetes"
	}}
	f := newFixtureAt(t, nil, nil, opts)
	ctx := t.Context()
	f.hire(t, "w-a", domain.WorkerAI)
	f.hire(t, "w-b", domain.WorkerAI)
	f.publish(t, "w-owner", "hello")
	// The dead server's leases have lapsed: on a shared database a run
	// whose lease still holds belongs to a server that may be alive.
	for _, c := range []struct{ worker, id, runtime string }{{"w-a", "a-adopted", "kubernetes"}, {"w-b", "a-host", "command"}} {
		if _, _, _, err := f.st.ClaimLeased(ctx, c.worker, c.id, time.Hour, -time.Minute); err != nil {
			t.Fatal(err)
		}
		if err := f.st.StartActivation(ctx, c.id, domain.AgentProcess{Runtime: c.runtime}, domain.Event{StreamID: domain.ActivationStreamPrefix + c.worker, Message: domain.Message{Body: "start"}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.d.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	f.d.Wait()
	runs := f.rec.runs
	if len(runs) != 1 || runs[0].ActivationID != "a-adopted" || runs[0].Token != "" {
		t.Fatalf("runs after recovery: %+v, want a-adopted's, without a token", runs)
	}
	for id, want := range map[string]domain.ActivationStatus{"a-adopted": domain.ActivationSucceeded, "a-host": domain.ActivationInterrupted} {
		if a, err := f.st.GetActivation(ctx, id); err != nil || a.Status != want {
			t.Errorf("%s: %s (%v), want %s", id, a.Status, err, want)
		}
	}
	trigs, err := f.st.ActivationTriggers(ctx, "a-adopted")
	if err != nil || len(trigs) == 0 {
		t.Fatalf("a-adopted's triggers: %d, %v", len(trigs), err)
	}
	f.settle(t) // w-b's triggers run again; w-a's are done
	for _, r := range f.rec.runs[1:] {
		if r.WorkerID != "w-b" {
			t.Errorf("a new run of %s (%s) after its run was adopted", r.WorkerID, r.ActivationID)
		}
	}
}
