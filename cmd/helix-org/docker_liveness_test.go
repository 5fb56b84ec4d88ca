package main

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/agent/docker"
	"github.com/helixml/helix-org/agent/docker/dockertest"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server/servertest"
)

// TestKilledContainerRunsAgainAndCancelStopsIt: an activation's container
// killed from outside (docker kill) fails the run as "agent process died"
// and its trigger runs again in a new container; cancel_activation stops
// that one with SIGTERM, leaving no container behind.
func TestKilledContainerRunsAgainAndCancelStopsIt(t *testing.T) {
	t.Parallel()
	st, eng := dockerStore(t, t.TempDir())
	setAll(t, st, map[*domain.SettingSpec]string{
		&agent.RuntimeSetting: agent.RuntimeDocker, &docker.ImageSetting: dockertest.Image(t, eng, nil),
		&docker.BinarySetting: dockertest.StaticBinary(t, "./cmd/helix-org"), &docker.OverridesSetting: `{"workers":{"w-sleeper":{"command":"sleep 600"}}}`,
	})
	_, _, owner := startServe(t, st, io.Discard)
	call := func(name string, args map[string]any) map[string]any {
		return servertest.Call[map[string]any](t, owner, name, args)
	}
	call("create_role", map[string]any{"id": "r-sleep", "title": "Sleeper", "content": "Sleep."})
	call("create_position", map[string]any{"id": "p-sleep", "role": "r-sleep", "title": "Sleeper"})
	call("hire_worker", map[string]any{"id": "w-sleeper", "position": "p-sleep", "kind": "ai", "name": "Sleeper"})

	running := func(n int) (domain.Activation, container.Summary) {
		t.Helper()
		var act domain.Activation
		var ctr container.Summary
		waitFor(t, st, fmt.Sprint("a container for run ", n), func() bool {
			acts, err := st.ListActivations(t.Context(), "w-sleeper")
			if err != nil || len(acts) < n || acts[n-1].Status != domain.ActivationRunning {
				return false
			}
			act = acts[n-1]
			for _, c := range activationContainers(t, eng) {
				if c.State == "running" && c.Labels[docker.LabelActivation] == act.ID {
					ctr = c
					return true
				}
			}
			return false
		})
		return act, ctr
	}
	first, ctr := running(1)
	if err := eng.Client().ContainerKill(t.Context(), ctr.ID, "KILL"); err != nil {
		t.Fatal(err)
	}
	second, _ := running(2)
	if a, _ := st.GetActivation(t.Context(), first.ID); a.Status != domain.ActivationFailed || a.Error != "agent process died: killed by a signal" {
		t.Errorf("killed run = %+v, want failed: agent process died", a)
	}

	begin := time.Now()
	call("cancel_activation", map[string]any{"activation": second.ID, "drop": true})
	waitFor(t, st, "the container to go", func() bool {
		a, err := st.GetActivation(t.Context(), second.ID)
		return err == nil && a.Status == domain.ActivationCancelled && len(activationContainers(t, eng)) == 0
	})
	t.Logf("container of %s stopped and removed %s after cancel", second.ID, time.Since(begin).Round(time.Millisecond))
	// Stopped by the SIGTERM, not killed after waiting out the grace: how
	// long that takes is the host's business (a loaded CI host took 3 s).
	note, ok, err := st.LatestLogEntry(t.Context(), "w-sleeper", second.ID, domain.LogNote)
	if want := "the agent ended when asked (SIGTERM): stopped"; err != nil || !ok || !strings.Contains(note.Message.Body, want) {
		t.Errorf("the cancelled run's last note = %q (%v, %v), want %q", note.Message.Body, ok, err, want)
	}
}
