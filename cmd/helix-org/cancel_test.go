package main

import (
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
)

// sleeperOrg serves an org whose one AI worker's agent sleeps a minute,
// and returns the database path, the store, the owner's session and the
// hire activation once its agent runs.
func sleeperOrg(t *testing.T) (string, *store.Store, func(name string, args map[string]any) map[string]any) {
	t.Helper()
	db := filepath.Join(t.TempDir(), "helix-org.db")
	st, err := store.Open(t.Context(), db, store.Options{Transports: transports.Specs(), Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	st.SetSetting(t.Context(), agent.RuntimeSetting, agent.RuntimeCommand)
	st.SetSetting(t.Context(), agent.CommandSetting, "sleep 60")
	_, _, owner := startServe(t, st, io.Discard)
	call := func(name string, args map[string]any) map[string]any {
		return servertest.Call[map[string]any](t, owner, name, args)
	}
	call("create_role", map[string]any{"id": "r-sleep", "title": "Sleeper", "content": "Sleep."})
	call("create_position", map[string]any{"id": "p-sleep", "role": "r-sleep", "title": "Sleeper"})
	call("hire_worker", map[string]any{"id": "w-sleeper", "position": "p-sleep", "kind": "ai", "name": "Sleeper"})
	return db, st, call
}

// runningAgent waits until the worker's n-th activation's agent runs.
func runningAgent(t *testing.T, st *store.Store, n int) domain.Activation {
	t.Helper()
	var act domain.Activation
	waitFor(t, st, "the sleeping agent to run", func() bool {
		acts, err := st.ListActivations(t.Context(), "w-sleeper")
		if err != nil || len(acts) < n {
			return false
		}
		act = acts[n-1]
		return act.Status == domain.ActivationRunning && act.Process != nil
	})
	return act
}

// stoppedWithin waits until act has ended and its agent process is gone,
// and fails unless that took at most limit from begin.
func stoppedWithin(t *testing.T, st *store.Store, act domain.Activation, begin time.Time, limit time.Duration) {
	t.Helper()
	waitFor(t, st, "the agent to stop", func() bool {
		a, err := st.GetActivation(t.Context(), act.ID)
		return err == nil && a.Status == domain.ActivationCancelled && !agent.Alive(act.ID, *act.Process)
	})
	took := time.Since(begin)
	t.Logf("activation %s cancelled and its agent gone in %s", act.ID, took.Round(time.Millisecond))
	if took > limit {
		t.Errorf("cancel took %s, want at most %s", took, limit)
	}
}

// TestCancelStopsARunningAgentWithinTwoSeconds: `helix-org activations
// cancel` (another process, on the database) and the cancel_activation
// tool (inside the server) each stop a 60 s agent within 2 s; without
// --drop its trigger runs again, with it the trigger is closed.
func TestCancelStopsARunningAgentWithinTwoSeconds(t *testing.T) {
	t.Run("cli", func(t *testing.T) {
		t.Parallel()
		db, st, _ := sleeperOrg(t)
		act := runningAgent(t, st, 1)
		begin := time.Now()
		out := runActivations(t, "cancel", act.ID, "--db", db)
		stoppedWithin(t, st, act, begin, 2*time.Second)
		wantAll(t, "cancel output", out, "Cancelled activation "+act.ID+" of w-sleeper; its triggers are pending again.")
		again := runningAgent(t, st, 2) // the hire trigger runs again
		if !strings.Contains(runActivations(t, "cancel", again.ID, "--drop", "--db", db), "its triggers are dropped") {
			t.Error("cancel --drop did not say the triggers are dropped")
		}
		stoppedWithin(t, st, again, begin, time.Minute)
		// retry runs the dropped trigger once more.
		wantAll(t, "retry output", runActivations(t, "retry", again.ID, "--db", db), "Pending again: trigger 1 (w-sleeper, hire event")
		third := runningAgent(t, st, 3)
		runActivations(t, "cancel", third.ID, "--drop", "--db", db)
		stoppedWithin(t, st, third, begin, time.Minute)
	})
	t.Run("mcp", func(t *testing.T) {
		t.Parallel()
		_, st, call := sleeperOrg(t)
		act := runningAgent(t, st, 1)
		begin := time.Now()
		got := call("cancel_activation", map[string]any{"activation": act.ID, "drop": true})
		if got["status"] != string(domain.ActivationCancelled) {
			t.Errorf("cancel_activation = %v", got)
		}
		stoppedWithin(t, st, act, begin, 2*time.Second)
		trigs, err := st.ListTriggers(t.Context(), store.TriggerQuery{Worker: "w-sleeper"})
		if err != nil || len(trigs) != 1 || trigs[0].Status != domain.TriggerDropped {
			t.Errorf("triggers = %+v, %v; want the hire trigger dropped", trigs, err)
		}
	})
}
