package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/agent/docker"
	"github.com/helixml/helix-org/agent/docker/dockertest"
	"github.com/helixml/helix-org/dispatch"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
)

// killRecordedAgents kills, at cleanup, the agent of every run of worker
// recorded in db that still runs, whatever the test's outcome: its process
// group, as a restarted server would (agent.StopOrphans).
func killRecordedAgents(t *testing.T, db, worker string) {
	t.Cleanup(func() {
		st, err := store.Open(context.Background(), db, store.Options{Transports: transports.Specs()})
		if err != nil {
			t.Error(err)
			return
		}
		defer st.Close()
		acts, _ := st.ListActivations(context.Background(), worker)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		agent.StopOrphans(ctx, acts)
	})
}

// runningSkills lists this instance's skill containers that run.
func runningSkills(t *testing.T, eng *docker.Engine) []container.Summary {
	t.Helper()
	list, err := eng.Client().ContainerList(context.Background(), container.ListOptions{Filters: filters.NewArgs(
		filters.Arg("label", docker.LabelInstance+"="+eng.Instance()), filters.Arg("label", docker.LabelKind+"="+docker.KindSkill))})
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// TestSIGTERMStopsSkillsAfterTheGrace: SIGTERM the real binary while an
// agent runs past a 1s shutdown grace and a skill is up; the grace is
// spent on the agent, and still no skill container runs once serve exits.
func TestSIGTERMStopsSkillsAfterTheGrace(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st, eng := dockerStore(t, dir)
	db, envs, addr := st.Path(), filepath.Join(dir, "envs"), freeAddr(t)
	skillSetup(t, st)
	runsOrg(t, st)
	st.SetSetting(t.Context(), agent.RuntimeSetting, agent.RuntimeCommand)
	st.SetSetting(t.Context(), agent.CommandSetting, agentCommand(t, "stubborn"))
	os.MkdirAll(envs, 0o700)
	shareWithAgents(t, st, envs) // for ../order.log and ../pids
	hireAI(t, st, "w-stubborn")
	killRecordedAgents(t, db, "w-stubborn")
	tok := servertest.Token(t, st, "w-owner")

	srv := startBinary(t, db, envs, addr, "--shutdown-grace", "1s")
	owner, err := servertest.Dial(t, "http://"+addr+"/workers/w-owner/mcp", tok)
	if err != nil {
		t.Fatal(err)
	}
	servertest.Call[domain.Skill](t, owner, "create_skill", with(csvSkill, "handler", csvHandler))
	servertest.Call[skillOut](t, owner, "call_skill", map[string]any{"name": "csv_sum", "input": map[string]any{"csv": "a\n1"}})
	until(t, time.Minute, "the agent's start", func() bool {
		_, err := os.Stat(filepath.Join(envs, "order.log"))
		return err == nil
	})
	if n := len(runningSkills(t, eng)); n != 1 {
		t.Fatalf("%d skill containers running before SIGTERM, want 1", n)
	}
	owner.Close()

	srv.Process.Signal(syscall.SIGTERM)
	if err := srv.Wait(); err != nil {
		t.Errorf("serve after SIGTERM: %v", err)
	}
	if left := runningSkills(t, eng); len(left) > 0 {
		t.Errorf("%d skill container(s) still running after serve exited: %v", len(left), left[0].Names)
	}
	if sk, _ := st.GetSkill(t.Context(), "csv_sum"); sk.Status != domain.SkillStopped {
		t.Errorf("skill after shutdown = %+v, want stopped", sk)
	}
	if acts, _ := st.ListActivations(t.Context(), "w-stubborn"); len(acts) != 1 || acts[0].Status != domain.ActivationInterrupted {
		t.Errorf("activations = %+v; want the one that outlived the grace interrupted", acts)
	}
}

// TestDockerRuntimeWithRelativeEnvsDir runs the real binary with the
// default-style `--envs-dir ./envs`: bind mounts need absolute paths, so
// the runtime resolves it. A missing image first means the agent never
// starts: the trigger is parked, not closed, and released once the image
// is set it runs in a container that gets the prompt on stdin.
func TestDockerRuntimeWithRelativeEnvsDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st, eng := dockerStore(t, dir)
	img := dockertest.Image(t, eng, nil)
	runsOrg(t, st)
	setAll(t, st, map[*domain.SettingSpec]string{
		&agent.RuntimeSetting: agent.RuntimeDocker, &docker.ImageSetting: "helix-org-test-missing:" + domain.RandomSlug(6),
		&docker.CommandSetting: "tee /workspace/prompt.txt", &dispatch.MaxStartAttemptsSetting: "1",
	})
	hireAI(t, st, "w-box")
	addr := freeAddr(t)
	srv := startBinaryIn(t, dir, addr, "--db", st.Path(), "--envs-dir", "./envs")

	parked := func() []domain.QueuedTrigger {
		qs, err := st.ListTriggers(t.Context(), store.TriggerQuery{Worker: "w-box", Statuses: []domain.TriggerStatus{domain.TriggerParked}})
		if err != nil {
			t.Fatal(err)
		}
		return qs
	}
	until(t, 30*time.Second, "the trigger to park", func() bool { return len(parked()) == 1 })
	if q := parked()[0]; !strings.Contains(q.LastError, "create container from helix-org-test-missing") {
		t.Errorf("parked trigger's last error = %q, want the missing image", q.LastError)
	}
	setAll(t, st, map[*domain.SettingSpec]string{&docker.ImageSetting: img})
	if out, err := runTriggers(t, "release", "--db", st.Path(), "--worker", "w-box"); err != nil {
		t.Fatalf("release: %v\n%s", err, out)
	}
	var acts []domain.Activation
	until(t, 60*time.Second, "the released run to end", func() bool {
		acts, _ = st.ListActivations(t.Context(), "w-box")
		return len(acts) == 2 && acts[0].Status != domain.ActivationRunning && acts[1].Status != domain.ActivationRunning
	})
	if acts[0].Status == acts[1].Status {
		t.Fatalf("activations = %+v; want one that did not start and one that succeeded", acts)
	}
	prompt, err := os.ReadFile(filepath.Join(dir, "envs", "w-box", "prompt.txt"))
	if err != nil || !strings.Contains(string(prompt), "You have just been hired") {
		t.Errorf("the container's prompt.txt = %q, %v", prompt, err)
	}
	if left := activationContainers(t, eng); len(left) > 0 {
		t.Errorf("%d activation container(s) left", len(left))
	}
	srv.Process.Signal(syscall.SIGTERM)
	if err := srv.Wait(); err != nil {
		t.Errorf("serve after SIGTERM: %v", err)
	}
}
