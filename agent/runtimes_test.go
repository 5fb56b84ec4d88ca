package agent_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/domain"
)

// settings is a map standing in for the store's config.
type settings map[string]string

func (s settings) SettingOr(_ context.Context, spec domain.SettingSpec) (string, error) {
	if v, ok := s[spec.Key]; ok {
		return v, nil
	}
	return spec.Default, nil
}

func (s settings) IntSetting(context.Context, domain.SettingSpec) int64 { return 0 }

// TestRuntimeSettingDerivesFromTable: agent.runtime's valid values and its
// description are the table's rows, in order.
func TestRuntimeSettingDerivesFromTable(t *testing.T) {
	want := []string{""}
	for _, r := range agent.Runtimes {
		want = append(want, r.Name)
		if !strings.Contains(agent.RuntimeSetting.Description, r.Name) {
			t.Errorf("agent.runtime's description lacks %q: %s", r.Name, agent.RuntimeSetting.Description)
		}
	}
	if diff := cmp.Diff(want, agent.RuntimeSetting.Enum); diff != "" {
		t.Errorf("agent.runtime enum (-table +setting):\n%s", diff)
	}
	if err := agent.RuntimeSetting.Check("podman"); err == nil || !strings.Contains(err.Error(), "claude, command, example, builtin, docker, codex, gemini, opencode, helix") {
		t.Errorf("Check(podman) = %v, want the valid names", err)
	}
}

// TestSelectorPicks: an empty agent.runtime takes the first row whose
// default applies; a named one is built from its row, a host runtime in
// the sandbox the start-up check found; a name no row has, or a host
// runtime without a sandbox unless agent.sandbox is off, is an error
// saying what to do, before any agent starts.
func TestSelectorPicks(t *testing.T) {
	noClaude := func(string) (string, error) { return "", errors.New("not found") }
	withClaude := func(string) (string, error) { return "/usr/bin/claude", nil }
	found := agent.SandboxCheck{Bwrap: "/usr/bin/bwrap"}
	failed := agent.SandboxCheck{Bwrap: "/usr/bin/bwrap", Err: errors.New("No permissions to create new namespace")}
	model := settings{"agent.runtime": "builtin", "agent.model": "m", "agent.base_url": "http://127.0.0.1:1"}
	off := func(s settings) settings { s["agent.sandbox"] = "off"; return s }
	tests := []struct {
		name     string
		settings settings
		lookPath func(string) (string, error)
		sandbox  agent.SandboxCheck
		want     string // the runtime's Go type and sandbox, or the error
	}{
		{"claude on PATH", settings{}, withClaude, found, "*agent.Claude in /usr/bin/bwrap"},
		{"no claude, a command set", settings{"agent.command": "my-agent"}, noClaude, found, "*agent.Command in /usr/bin/bwrap"},
		{"named command beats claude on PATH", settings{"agent.runtime": "command", "agent.command": "x"}, withClaude, found, "*agent.Command in /usr/bin/bwrap"},
		{"builtin with a model", model, noClaude, found, "*agent.Builtin on anthropic in /usr/bin/bwrap"},
		{"nothing set: the example agent", settings{}, noClaude, found, "*agent.Builtin on example in /usr/bin/bwrap"},
		{"a model, no runtime named: builtin", settings{"agent.model": "m", "agent.base_url": "http://127.0.0.1:1"}, noClaude, found, "*agent.Builtin on anthropic in /usr/bin/bwrap"},
		{"example named, a model set", settings{"agent.runtime": "example", "agent.model": "m"}, noClaude, found, "*agent.Builtin on example in /usr/bin/bwrap"},
		{"codex named", settings{"agent.runtime": "codex"}, withClaude, found, "*agent.Codex in /usr/bin/bwrap"},
		{"gemini named", settings{"agent.runtime": "gemini"}, withClaude, found, "*agent.Gemini in /usr/bin/bwrap"},
		{"opencode named", settings{"agent.runtime": "opencode"}, withClaude, found, "*agent.OpenCode in /usr/bin/bwrap"},
		{"codex where bubblewrap cannot run", settings{"agent.runtime": "codex"}, noClaude, failed, "cannot run here (No permissions"},
		{"sandbox off: opencode unsandboxed", off(settings{"agent.runtime": "opencode"}), noClaude, failed, "*agent.OpenCode unsandboxed"},
		{"docker without Docker", settings{"agent.runtime": "docker"}, noClaude, found, "the docker runtime is unavailable"},
		{"kubernetes without a cluster", settings{"agent.runtime": "kubernetes"}, noClaude, found, "the kubernetes runtime is unavailable"},
		{"builtin without a model", settings{"agent.runtime": "builtin"}, noClaude, found, "agent.model"},
		{"helix in a server without it", settings{"agent.runtime": "helix"}, noClaude, found, "the helix runtime is unavailable"},
		{"unknown name", settings{"agent.runtime": "podman"}, noClaude, found, `agent.runtime "podman" is not available in this build (valid: claude, command, example, builtin, docker, codex, gemini, opencode, helix, kubernetes)`},
		{"claude where bubblewrap cannot run", settings{}, withClaude, failed,
			"host agents run only in a bubblewrap sandbox, and it cannot run here (No permissions to create new namespace): " +
				"install bubblewrap and allow user namespaces, use agent.runtime docker, or run host agents unsandboxed as the server's user with `helix-org config set agent.sandbox off`"},
		{"command without a start-up check", settings{"agent.command": "x"}, noClaude, agent.SandboxCheck{}, "cannot run here (no sandbox was found at start)"},
		{"builtin where bubblewrap cannot run", model, noClaude, failed, "cannot run here (No permissions"},
		{"sandbox off: claude unsandboxed", off(settings{}), withClaude, failed, "*agent.Claude unsandboxed"},
		{"sandbox off: command unsandboxed", off(settings{"agent.command": "x"}), noClaude, failed, "*agent.Command unsandboxed"},
		{"sandbox off: builtin unsandboxed", off(settings{"agent.runtime": "builtin", "agent.model": "m", "agent.base_url": "http://127.0.0.1:1"}), noClaude, failed, "*agent.Builtin on anthropic unsandboxed"},
		{"a shared path that is missing", settings{"agent.command": "x", "agent.sandbox.paths": `{"ro":["/no/such/dir"]}`}, noClaude, found,
			"agent.sandbox.paths: stat /no/such/dir: no such file or directory"},
		{"a shared path that is relative", settings{"agent.command": "x", "agent.sandbox.paths": `{"rw":["data"]}`}, noClaude, found,
			`agent.sandbox.paths: "data" is not an absolute path below /`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var built string
			table := make([]agent.RuntimeDef, len(agent.Runtimes))
			for i, r := range agent.Runtimes {
				table[i] = r
				table[i].New = func(ctx context.Context, env agent.RuntimeEnv, run domain.Run) (domain.Runtime, error) {
					rt, err := r.New(ctx, env, run)
					if err != nil {
						return nil, err
					}
					built = fmt.Sprintf("%T %s", rt, sandboxOf(rt))
					if b, ok := rt.(*agent.Builtin); ok {
						built = fmt.Sprintf("%T on %s %s", rt, providerName(b.LLM.Provider), sandboxOf(rt))
					}
					return nil, errStop
				}
			}
			sel := agent.Selector{Table: table, Env: agent.RuntimeEnv{Settings: tt.settings, LookPath: tt.lookPath, Sandbox: tt.sandbox.Result,
				RoleOf: func(context.Context, string) (domain.Role, error) { return domain.Role{ID: "r-x"}, nil }}}
			_, err := sel.Run(t.Context(), domain.Run{WorkerID: "w-x"})
			got := built
			if !errors.Is(err, errStop) {
				got = err.Error()
			}
			if !strings.Contains(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// sandboxOf says where a host runtime runs its agent.
func sandboxOf(rt domain.Runtime) string {
	var sb *agent.Bwrap
	switch rt := rt.(type) {
	case *agent.Claude:
		sb = rt.Sandbox
	case *agent.Command:
		sb = rt.Sandbox
	case *agent.Builtin:
		sb = rt.Sandbox
	case *agent.Codex:
		sb = rt.Sandbox
	case *agent.Gemini:
		sb = rt.Sandbox
	case *agent.OpenCode:
		sb = rt.Sandbox
	}
	if sb == nil {
		return "unsandboxed"
	}
	return "in " + sb.Path
}

var errStop = errors.New("built; not run")

// providerName is the built-in agent's provider as the relay defaults it.
func providerName(p string) string {
	if p == "" {
		return "anthropic"
	}
	return p
}
