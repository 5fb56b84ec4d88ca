package dispatch_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/dispatch"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

// step runs one dispatcher step and waits for what it started.
func (f *fixture) step(t *testing.T) {
	t.Helper()
	if err := f.d.Step(t.Context()); err != nil {
		t.Fatal(err)
	}
	f.d.Wait()
}

func (f *fixture) activations(t *testing.T) []domain.Activation {
	t.Helper()
	acts, err := f.st.ListActivations(t.Context(), "w-echo")
	if err != nil {
		t.Fatal(err)
	}
	return acts
}

// queue is the worker's triggers as "<id>:<status>:<attempts>".
func (f *fixture) queue(t *testing.T) []string {
	t.Helper()
	trigs, err := f.st.ListTriggers(t.Context(), store.TriggerQuery{Worker: "w-echo"})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, q := range trigs {
		out = append(out, strings.Join([]string{string(q.Kind), string(q.Status), string(rune('0' + q.Attempts))}, ":"))
	}
	return out
}

// TestAgentThatNeverStartsIsRetriedThenParked drives a claude runtime
// whose binary is missing through the real dispatcher on a fake clock:
// each failed start hands the triggers back with a doubling, capped
// backoff (nothing starts before it is due, and what arrives meanwhile
// joins the next try); after dispatch.max_start_attempts they are parked,
// never closed; released once claude exists, they run.
func TestAgentThatNeverStartsIsRetriedThenParked(t *testing.T) {
	clock := storetest.NewClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	bin := filepath.Join(t.TempDir(), "claude")
	f := newFixtureAt(t, &agent.Claude{Bin: bin}, clock.Now, dispatch.Options{})
	ctx := t.Context()
	for spec, v := range map[*domain.SettingSpec]string{&dispatch.MaxStartAttemptsSetting: "3",
		&dispatch.StartBackoffSetting: "10s", &dispatch.StartBackoffMaxSetting: "15s"} {
		if err := f.st.SetSetting(ctx, *spec, v); err != nil {
			t.Fatal(err)
		}
	}
	f.hire(t, "w-echo", domain.WorkerAI)

	f.step(t) // attempt 1 of the hire trigger
	acts := f.activations(t)
	if len(acts) != 1 || acts[0].Status != domain.ActivationFailed || !strings.Contains(acts[0].Error, "did not start: ") ||
		!strings.Contains(acts[0].Error, "not found on PATH") {
		t.Fatalf("activations = %+v, want one failed that did not start", acts)
	}
	if diff := cmp.Diff([]string{"hire:pending:1"}, f.queue(t)); diff != "" {
		t.Errorf("queue after a failed start (-want +got):\n%s", diff)
	}
	ev := f.publish(t, "w-owner", "while backing off")
	clock.Advance(9 * time.Second)
	f.step(t)
	if n := len(f.activations(t)); n != 1 {
		t.Fatalf("%d activations 9s into a 10s backoff; the retry started early", n)
	}

	clock.Advance(time.Second)
	f.step(t) // attempt 2: the hire trigger and the event that arrived meanwhile
	if acts = f.activations(t); len(acts) != 2 || len(acts[1].TriggerIDs) != 2 {
		t.Fatalf("activations = %+v, want a second with both triggers", acts)
	}
	if diff := cmp.Diff([]string{"hire:pending:2", "event:pending:1"}, f.queue(t)); diff != "" {
		t.Errorf("queue after two failed starts (-want +got):\n%s", diff)
	}
	clock.Advance(14 * time.Second) // 20s doubled, capped at 15s
	f.step(t)
	if n := len(f.activations(t)); n != 2 {
		t.Fatalf("%d activations before the capped 15s backoff ended", n)
	}
	clock.Advance(time.Second)
	f.step(t) // attempt 3: the hire trigger parks, the event waits
	if diff := cmp.Diff([]string{"hire:parked:3", "event:pending:2"}, f.queue(t)); diff != "" {
		t.Errorf("queue after three failed starts (-want +got):\n%s", diff)
	}
	clock.Advance(15 * time.Second)
	f.step(t) // the event's third attempt: parked too
	if diff := cmp.Diff([]string{"hire:parked:3", "event:parked:3"}, f.queue(t)); diff != "" {
		t.Errorf("queue after the event's third failed start (-want +got):\n%s", diff)
	}
	clock.Advance(time.Hour)
	f.step(t)
	if n := len(f.activations(t)); n != 4 {
		t.Errorf("%d activations; parked triggers must not run on their own", n)
	}
	if n, _ := f.st.PendingTriggers(ctx); n != 0 {
		t.Errorf("pending triggers = %d, want 0 (both parked)", n)
	}
	parked, _ := f.st.ListTriggers(ctx, store.TriggerQuery{Worker: "w-echo"})
	for _, q := range parked {
		if q.Reason != "the agent failed to start 3 time(s): claude runtime: \""+bin+"\" not found on PATH; install Claude Code or choose another agent.runtime" ||
			!strings.Contains(q.LastError, "not found on PATH") {
			t.Errorf("parked trigger %d: reason %q, last error %q", q.ID, q.Reason, q.LastError)
		}
	}
	log := activationLog(t, f.st, "w-echo")
	for _, want := range []string{"exit: failed: did not start: claude runtime:", "retry: the agent did not start (attempt 1 of 3); trigger(s) 1 wait until 2026-01-02T03:04:15Z",
		"parked: trigger(s) 1 parked: the agent failed to start 3 time(s)", "`helix-org triggers release --worker w-echo`"} {
		if !slices.ContainsFunc(log, func(s string) bool { return strings.Contains(s, want) }) {
			t.Errorf("activation log lacks %q:\n%s", want, strings.Join(log, "\n"))
		}
	}

	// Claude is installed; the operator releases the worker's triggers.
	got := filepath.Join(f.dir, "prompt")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\nhead -n 1 > "+got+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	released, err := dispatch.ReleaseTriggers(ctx, f.st, store.TriggerSelection{Worker: "w-echo"})
	if err != nil || len(released) != 2 {
		t.Fatalf("release = %v, %v", released, err)
	}
	if diff := cmp.Diff([]string{"hire:pending:0", "event:pending:0"}, f.queue(t)); diff != "" {
		t.Errorf("queue after release (-want +got):\n%s", diff)
	}
	f.step(t)
	acts = f.activations(t)
	if last := acts[len(acts)-1]; len(acts) != 5 || last.Status != domain.ActivationSucceeded || len(last.TriggerIDs) != 2 {
		t.Errorf("after release: %d activations, last %+v; want a fifth that succeeded with both triggers", len(acts), last)
	}
	if prompt, _ := os.ReadFile(got); !strings.Contains(string(prompt), ev.ID) || !strings.Contains(string(prompt), "You have just been hired") {
		t.Errorf("the released run's prompt lacks its triggers:\n%s", prompt)
	}
	if diff := cmp.Diff([]string{"hire:done:0", "event:done:0"}, f.queue(t)); diff != "" {
		t.Errorf("queue after the run (-want +got):\n%s", diff)
	}
	if log := activationLog(t, f.st, "w-echo"); !slices.ContainsFunc(log, func(s string) bool {
		return strings.HasPrefix(s, "operator: trigger(s) 1 (hire event") && strings.HasSuffix(s, "released by the operator: they run again")
	}) {
		t.Errorf("no operator entry for the release:\n%s", strings.Join(log, "\n"))
	}
}

// TestDroppedTriggerNeverRuns: a parked trigger the operator drops is
// closed and recorded, and never runs, even once the runtime works.
func TestDroppedTriggerNeverRuns(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "claude")
	f := newFixtureWith(t, &agent.Claude{Bin: bin})
	ctx := t.Context()
	f.st.SetSetting(ctx, dispatch.MaxStartAttemptsSetting, "1")
	f.hire(t, "w-echo", domain.WorkerAI)
	f.step(t)
	if diff := cmp.Diff([]string{"hire:parked:1"}, f.queue(t)); diff != "" {
		t.Fatalf("queue (-want +got):\n%s", diff)
	}
	dropped, err := dispatch.DropTriggers(ctx, f.st, store.TriggerSelection{IDs: []int64{1}})
	if err != nil || len(dropped) != 1 || dropped[0].Status != domain.TriggerDropped || dropped[0].Reason != dispatch.DropReason {
		t.Fatalf("drop = %+v, %v", dropped, err)
	}
	os.WriteFile(bin, []byte("#!/bin/sh\nhead -n 1 >/dev/null\n"), 0o755)
	f.step(t)
	if n := len(f.activations(t)); n != 1 {
		t.Errorf("%d activations; a dropped trigger ran", n)
	}
	if _, err := dispatch.ReleaseTriggers(ctx, f.st, store.TriggerSelection{IDs: []int64{1}}); !errors.Is(err, domain.ErrConflict) {
		t.Errorf("releasing a dropped trigger: err = %v, want a conflict", err)
	}
	if log := activationLog(t, f.st, "w-echo"); !slices.ContainsFunc(log, func(s string) bool {
		return strings.HasPrefix(s, "operator: trigger(s) 1 ") && strings.Contains(s, "dropped by the operator")
	}) {
		t.Errorf("no operator entry for the drop:\n%s", strings.Join(log, "\n"))
	}
}

// TestShutdownBeforeStartIsNoAttempt: a run cut off by shutdown before
// its agent started is interrupted, not a failed start: its triggers
// stay pending with no attempt counted.
func TestShutdownBeforeStartIsNoAttempt(t *testing.T) {
	entered := make(chan struct{})
	f := newFixtureWith(t, spawnFunc(func(ctx context.Context, run domain.Run) (domain.RunResult, error) {
		close(entered)
		<-ctx.Done()
		return domain.RunResult{ExitStatus: -1}, ctx.Err()
	}))
	f.hire(t, "w-echo", domain.WorkerAI)
	if err := f.d.Step(t.Context()); err != nil {
		t.Fatal(err)
	}
	<-entered
	sctx, cancel := context.WithTimeout(t.Context(), time.Millisecond)
	defer cancel()
	f.d.Shutdown(sctx)
	if acts := f.activations(t); len(acts) != 1 || acts[0].Status != domain.ActivationInterrupted {
		t.Errorf("activations = %+v, want one interrupted", acts)
	}
	if diff := cmp.Diff([]string{"hire:pending:0"}, f.queue(t)); diff != "" {
		t.Errorf("queue (-want +got):\n%s", diff)
	}
}

// spawnFunc is a Spawner from a function.
type spawnFunc func(context.Context, domain.Run) (domain.RunResult, error)

func (f spawnFunc) Run(ctx context.Context, run domain.Run) (domain.RunResult, error) {
	return f(ctx, run)
}

// TestRecoverStopsOrphansBeforeTheirTriggersRun: Recover hands Reap the
// activations a crash left running, with the process each recorded, while
// their triggers are still claimed — so nothing can re-run them before the
// old agents are stopped.
func TestRecoverStopsOrphansBeforeTheirTriggersRun(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	f.hire(t, "w-echo", domain.WorkerAI)
	act, _, _, err := f.st.Claim(ctx, "w-echo", "a-crashed", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	proc := domain.AgentProcess{PGID: 4242, StartTicks: 99}
	if err := f.st.StartActivation(ctx, act.ID, proc, domain.Event{StreamID: domain.ActivationStreamPrefix + "w-echo",
		Message: domain.Message{Body: "start"}}); err != nil {
		t.Fatal(err)
	}
	var reaped []domain.Activation
	var pendingThen int64 = -1
	d := dispatch.New(f.st, f.rec, dispatch.Options{EnvsDir: f.dir, MCPBaseURL: "http://127.0.0.1:1",
		Reap: func(ctx context.Context, orphans []domain.Activation) error {
			reaped = orphans
			pendingThen, _ = runnable(ctx, f.st)
			return errors.New("one would not die") // logged; recovery goes on
		}})
	if err := d.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	if len(reaped) != 1 || reaped[0].ID != "a-crashed" || reaped[0].Process == nil || *reaped[0].Process != proc {
		t.Errorf("Reap got %+v, want a-crashed with its process", reaped)
	}
	if pendingThen != 0 {
		t.Errorf("%d triggers were runnable while Reap ran", pendingThen)
	}
	d.Step(ctx)
	d.Wait()
	if diff := cmp.Diff([]string{"w-echo"}, f.rec.workers()); diff != "" {
		t.Errorf("re-runs after recovery (-want +got):\n%s", diff)
	}
}

// runnable counts pending triggers a step could claim.
func runnable(ctx context.Context, st *store.Store) (int64, error) {
	ws, err := st.WorkersWithPending(ctx)
	return int64(len(ws)), err
}
