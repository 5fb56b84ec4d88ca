package docker_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/agent/docker"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store/storetest"
)

func TestOverridesFor(t *testing.T) {
	o, err := docker.ParseOverrides(`{"roles":{"r-dev":{"image":"dev:1","networks":["egress"]}},"workers":{"w-x":{"image":"x:2","command":"claude -p"},"w-c":{"cli":"codex"}}}`)
	if err != nil {
		t.Fatal(err)
	}
	base := docker.Override{Image: "base:1", Command: "helix-org agent run"}
	tests := []struct {
		name, worker, role string
		want               docker.Override
	}{
		{"no override", "w-a", "r-ops", base},
		{"role", "w-a", "r-dev", docker.Override{Image: "dev:1", Command: "helix-org agent run", Networks: []string{"egress"}}},
		{"worker beats role", "w-x", "r-dev", docker.Override{Image: "x:2", Command: "claude -p", Networks: []string{"egress"}}},
		{"worker without role", "w-x", "", docker.Override{Image: "x:2", Command: "claude -p"}},
		{"worker's cli", "w-c", "r-dev", docker.Override{Image: "dev:1", Command: "helix-org agent run", CLI: "codex", Networks: []string{"egress"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, o.For(base, tc.worker, tc.role)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseSettingsRefusesMistakes(t *testing.T) {
	tests := []struct {
		name string
		err  func() error
		want string
	}{
		{"unknown override key", func() error { _, err := docker.ParseOverrides(`{"role":{}}`); return err }, `unknown field "role"`},
		{"unknown cli", func() error { _, err := docker.ParseOverrides(`{"workers":{"w-x":{"cli":"goose"}}}`); return err },
			`w-x: cli "goose" is not one of builtin, claude, codex, gemini, opencode`},
		{"env not strings", func() error { _, err := docker.ParseEnv("agent.docker.env", `{"A":1}`); return err }, "want a JSON object of strings"},
		{"bad memory", func() error { _, err := docker.ParseLimits("lots", "1", 10, "64m", "65534", ""); return err }, `memory: "lots" is not a size`},
		{"bad cpus", func() error { _, err := docker.ParseLimits("1g", "-1", 10, "64m", "65534", ""); return err }, `cpus: "-1" is not a positive number`},
		{"no pids cap", func() error { _, err := docker.ParseLimits("1g", "1", 0, "64m", "65534", ""); return err }, "pids: must be positive"},
		{"root user", func() error { _, err := docker.ParseLimits("1g", "1", 10, "64m", "0:0", ""); return err }, `user: "0:0" must be a numeric non-root uid`},
		{"named user", func() error { _, err := docker.ParseLimits("1g", "1", 10, "64m", "root", ""); return err }, `user: "root" must be a numeric non-root uid`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.err(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
	l, err := docker.ParseLimits("512m", "1.5", 64, "16m", "65534:65534", "runsc")
	if err != nil {
		t.Fatal(err)
	}
	want := docker.Limits{Memory: 512 << 20, NanoCPUs: 1.5e9, Pids: 64, TmpBytes: 16 << 20, User: "65534:65534", OCIRuntime: "runsc"}
	if diff := cmp.Diff(want, l); diff != "" {
		t.Errorf("limits (-want +got):\n%s", diff)
	}
	if hc := l.HostConfig(nil); hc.Runtime != "runsc" {
		t.Errorf("OCI runtime = %q", hc.Runtime)
	}
}

// TestFromSettingsPicksTheCLI: agent.docker.cli, agent.model and
// agent.effort reach the runtime, read on every run; a CLI it cannot run
// is refused when set.
func TestFromSettingsPicksTheCLI(t *testing.T) {
	st := storetest.New(t)
	ctx := t.Context()
	for spec, v := range map[*domain.SettingSpec]string{&docker.CLISetting: "codex", &agent.ModelSetting: "m-9", &agent.EffortSetting: "high"} {
		if err := st.SetSetting(ctx, *spec, v); err != nil {
			t.Fatal(err)
		}
	}
	rt, err := docker.FromSettings(ctx, st, docker.Host{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rt.CLI != "codex" || rt.Model != "m-9" || rt.Effort != "high" {
		t.Errorf("runtime cli %q model %q effort %q, want codex m-9 high", rt.CLI, rt.Model, rt.Effort)
	}
	err = st.SetSetting(ctx, docker.CLISetting, "goose")
	if err == nil || !strings.Contains(err.Error(), "valid: builtin, claude, codex, gemini, opencode") {
		t.Errorf("set agent.docker.cli goose: %v", err)
	}
}

// A worker's preserved session is kept per CLI, so a change of CLI never
// hands one CLI's session id to another.
func TestSessionKeyPerCLI(t *testing.T) {
	o, err := docker.ParseOverrides(`{"workers":{"w-c":{"cli":"codex"},"w-b":{"cli":"builtin"}}}`)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ cli, worker, want string }{
		{"", "w-x", "docker"},
		{"claude", "w-x", "docker/claude"},
		{"claude", "w-c", "docker/codex"},
		{"claude", "w-b", "docker"},
	} {
		r := &docker.Runtime{CLI: tc.cli, Overrides: o}
		if got := r.SessionKey(t.Context(), tc.worker); got != tc.want {
			t.Errorf("cli %q, worker %s: session key %q, want %q", tc.cli, tc.worker, got, tc.want)
		}
	}
}
