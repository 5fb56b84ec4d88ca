package main

import (
	"bytes"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/agent/clitest"
	"github.com/helixml/helix-org/agent/docker"
	"github.com/helixml/helix-org/agent/docker/dockertest"
	"github.com/helixml/helix-org/agent/llm"
	"github.com/helixml/helix-org/agent/llm/llmtest"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
)

// canary is the provider key: it must reach the provider, and nothing else.
const canary = "sk-canary-0d5c2f-provider-key"

// heldCall is a fake provider whose first call blocks until released, so
// a test can look at the agent while it is alive and waiting on its model.
type heldCall struct {
	fake    *llmtest.Server
	inCall  chan struct{}
	release chan struct{}
	once    sync.Once
}

func newHeldCall(t *testing.T) *heldCall {
	h := &heldCall{inCall: make(chan struct{}), release: make(chan struct{})}
	h.fake = llmtest.New(t, llm.Anthropic, func(llmtest.Turn) llmtest.Reply {
		h.once.Do(func() {
			close(h.inCall)
			<-h.release
		})
		return llmtest.Reply{Text: "done", Usage: llm.Usage{InputTokens: 77, OutputTokens: 7}}
	}).WantKey(canary)
	t.Cleanup(h.free)
	return h
}

func (h *heldCall) free() {
	select {
	case <-h.release:
	default:
		close(h.release)
	}
}

// TestAgentsHoldNoSecrets sets agent.api_key to a canary and runs an
// activation on every runtime. While each agent waits on its model call,
// the canary and any operator token (hxo_) must be absent from every file
// under envs (which holds no token at all), from /proc/<pid>/environ of
// every process of the run, and from `docker inspect` of its container;
// yet the canary reaches the provider, through the relay, as the key.
func TestAgentsHoldNoSecrets(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", canary) // the server's own environment, too
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		runtime string
		setup   func(t *testing.T, st *store.Store)
	}{
		{agent.RuntimeBuiltin, nil},
		{agent.RuntimeCommand, func(t *testing.T, st *store.Store) {
			setAll(t, st, map[*domain.SettingSpec]string{&agent.CommandSetting: agentCommand(t, "relay")})
		}},
		{agent.RuntimeClaude, func(t *testing.T, st *store.Store) {
			bin := t.TempDir()
			script := "#!/bin/sh\nHELIX_ORG_TEST_AGENT=claude-relay exec " + exe + " \"$@\"\n"
			clitest.WriteExecutable(t, filepath.Join(bin, "claude"), script)
			t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
		}},
		{agent.RuntimeDocker, nil},
	}
	for _, tt := range tests {
		t.Run(tt.runtime, func(t *testing.T) {
			held := newHeldCall(t)
			var st *store.Store
			var eng *docker.Engine
			if tt.runtime == agent.RuntimeDocker {
				st, eng = dockerStore(t, t.TempDir())
				setAll(t, st, map[*domain.SettingSpec]string{&docker.ImageSetting: dockertest.Image(t, eng, nil),
					&docker.BinarySetting: dockertest.StaticBinary(t, "./cmd/helix-org")})
			} else {
				st, err = store.Open(t.Context(), filepath.Join(t.TempDir(), "helix-org.db"), store.Options{Transports: transports.Specs(), Synchronous: "NORMAL"})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { st.Close() })
			}
			setAll(t, st, map[*domain.SettingSpec]string{&agent.RuntimeSetting: tt.runtime, &agent.ProviderSetting: llm.Anthropic,
				&agent.ModelSetting: "fake-model", &agent.BaseURLSetting: held.fake.BaseURL(), &agent.APIKeySetting: canary})
			if tt.setup != nil {
				tt.setup(t, st)
			}
			_, envs, owner := startServe(t, st, io.Discard)
			call := func(name string, args map[string]any) { servertest.Call[map[string]any](t, owner, name, args) }
			call("create_role", map[string]any{"id": "r-vault", "title": "Vault", "content": "Say done."})
			call("create_position", map[string]any{"id": "p-vault", "role": "r-vault", "title": "Vault"})
			call("hire_worker", map[string]any{"id": "w-vault", "position": "p-vault", "kind": "ai", "name": "Vault", "grants": []string{"read_events"}})

			select {
			case <-held.inCall:
			case <-time.After(90 * time.Second):
				t.Fatal("the agent made no model call within 90s")
			}
			act := runningActivation(t, st, "w-vault")
			checkFiles(t, envs)
			procs := agentEnvirons(t, act.ID)
			if len(procs) == 0 {
				t.Fatalf("no process of activation %s found in /proc while it waited on its model", act.ID)
			}
			for pid, env := range procs {
				checkEnviron(t, "/proc/"+pid+"/environ", env)
			}
			if tt.runtime == agent.RuntimeDocker {
				checkContainer(t, eng, act.ID)
			}
			held.free()
			waitIdle(t, st)

			a, err := st.GetActivation(t.Context(), act.ID)
			if err != nil || a.Status != domain.ActivationSucceeded {
				t.Fatalf("activation = %+v, %v; want succeeded", a, err)
			}
			// The runtimes report 77/7 differently or (claude's fake) not at
			// all; these come from the relay's ledger.
			if a.InputTokens != 77 || a.OutputTokens != 7 {
				t.Errorf("activation tokens %d/%d, want the provider's 77/7 from the relay", a.InputTokens, a.OutputTokens)
			}
			turns := held.fake.Turns()
			if len(turns) == 0 {
				t.Fatal("the provider saw no call")
			}
			for _, turn := range turns {
				if turn.APIKey != canary {
					t.Errorf("the provider saw key %q, want the canary", turn.APIKey)
				}
			}
			checkFiles(t, envs)
		})
	}
}

func runningActivation(t *testing.T, st *store.Store, worker string) domain.Activation {
	t.Helper()
	acts, err := st.ListActivations(t.Context(), worker)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range acts {
		if a.Status == domain.ActivationRunning {
			return a
		}
	}
	t.Fatalf("%s has no running activation: %+v", worker, acts)
	return domain.Activation{}
}

// checkFiles: nothing under envs holds a token of any kind or the key.
func checkFiles(t *testing.T, envs string) {
	t.Helper()
	n := 0
	err := filepath.WalkDir(envs, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		n++
		for _, bad := range []string{canary, store.TokenPrefix, store.ActivationTokenPrefix} {
			if bytes.Contains(data, []byte(bad)) {
				t.Errorf("%s holds %q", path, bad)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 4 {
		t.Errorf("only %d files under %s; the run's role.md, identity.md, agent.md and mcp.json should be there", n, envs)
	}
}

// agentEnvirons reads the environment of every live process of an
// activation, found by its HELIX_ORG_ACTIVATION (containers' processes
// included: they are processes of this host).
func agentEnvirons(t *testing.T, activation string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	pids, _ := filepath.Glob("/proc/[0-9]*")
	for _, dir := range pids {
		data, err := os.ReadFile(dir + "/environ")
		if err != nil {
			continue // gone, or a kernel thread
		}
		env := strings.Split(string(data), "\x00")
		if slices.Contains(env, "HELIX_ORG_ACTIVATION="+activation) {
			out[filepath.Base(dir)] = env
		}
	}
	return out
}

// checkEnviron: the key and operator tokens are absent, and the run's own
// token is there (so this looked at a real agent's environment).
func checkEnviron(t *testing.T, where string, env []string) {
	t.Helper()
	own := false
	for _, kv := range env {
		if strings.Contains(kv, canary) || strings.Contains(kv, store.TokenPrefix) {
			t.Errorf("%s holds %q", where, kv)
		}
		own = own || strings.HasPrefix(kv, domain.TokenEnv+"="+store.ActivationTokenPrefix)
	}
	if !own {
		t.Errorf("%s has no %s=hxa_…: %q", where, domain.TokenEnv, env)
	}
}

// checkContainer looks at the activation's container as `docker inspect` does.
func checkContainer(t *testing.T, eng *docker.Engine, activation string) {
	t.Helper()
	list, err := eng.Client().ContainerList(t.Context(), container.ListOptions{Filters: filters.NewArgs(filters.Arg("label", docker.LabelActivation+"="+activation))})
	if err != nil || len(list) != 1 {
		t.Fatalf("containers of %s: %d, %v", activation, len(list), err)
	}
	insp, err := eng.Client().ContainerInspect(t.Context(), list[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	checkEnviron(t, "docker inspect "+list[0].ID[:12], insp.Config.Env)
}
