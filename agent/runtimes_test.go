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
	if err := agent.RuntimeSetting.Check("podman"); err == nil || !strings.Contains(err.Error(), "claude, command, builtin, docker") {
		t.Errorf("Check(podman) = %v, want the valid names", err)
	}
}

// TestSelectorPicks: an empty agent.runtime takes the first row whose
// default applies; a named one is built from its row; a name no row has
// is an error naming the valid ones, before any agent starts.
func TestSelectorPicks(t *testing.T) {
	noClaude := func(string) (string, error) { return "", errors.New("not found") }
	withClaude := func(string) (string, error) { return "/usr/bin/claude", nil }
	tests := []struct {
		name     string
		settings settings
		lookPath func(string) (string, error)
		want     string // the runtime's Go type, or the error
	}{
		{"claude on PATH", settings{}, withClaude, "*agent.Claude"},
		{"no claude, a command set", settings{"agent.command": "my-agent"}, noClaude, "*agent.Command"},
		{"named command beats claude on PATH", settings{"agent.runtime": "command", "agent.command": "x"}, withClaude, "*agent.Command"},
		{"docker without Docker", settings{"agent.runtime": "docker"}, noClaude, "the docker runtime is unavailable"},
		{"builtin without a model", settings{"agent.runtime": "builtin"}, noClaude, "agent.model"},
		{"unknown name", settings{"agent.runtime": "podman"}, noClaude, `agent.runtime "podman" is not available in this build (valid: claude, command, builtin, docker)`},
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
					built = fmt.Sprintf("%T", rt)
					return nil, errStop
				}
			}
			sel := agent.Selector{Table: table, Env: agent.RuntimeEnv{Settings: tt.settings, LookPath: tt.lookPath,
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

var errStop = errors.New("built; not run")
