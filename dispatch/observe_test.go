package dispatch_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/dispatch"
	"github.com/helixml/helix-org/domain"
)

// TestLogsActivationStartAndEnd: the server's log has one line when an
// activation starts and one when it ends, and a failed run's line (and
// its activation) carries the agent's own last error, not just its exit
// status.
func TestLogsActivationStartAndEnd(t *testing.T) {
	for _, tc := range []struct {
		name, line string
		want       []string
		wantError  string
	}{
		{"succeeds", "echo done", []string{
			`level=INFO msg="activation started" component=dispatch worker=w-echo activation=a-`,
			`triggers=1 runtime=command`,
			`level=INFO msg="activation finished" component=dispatch worker=w-echo activation=a-`,
			`triggers=1 runtime=command outcome=succeeded duration=`,
			`input_tokens=0 output_tokens=0 reason=""`,
		}, ""},
		{"fails with its reason", "echo working; echo 'config file missing' >&2; exit 3", []string{
			`level=WARN msg="activation finished" component=dispatch worker=w-echo activation=a-`,
			`outcome=failed`,
			`reason="config file missing (agent exited with status 3)"`,
		}, "config file missing (agent exited with status 3)"},
		{"fails without a word", "exit 2", []string{`outcome=failed`, `reason="agent exited with status 2"`}, "agent exited with status 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			// The selector names the runtime, as in the server.
			rt := &agent.Selector{Table: []agent.RuntimeDef{{Name: agent.RuntimeCommand, Picked: func(context.Context, agent.RuntimeEnv) bool { return true },
				New: func(context.Context, agent.RuntimeEnv, domain.Run) (domain.Runtime, error) {
					return &agent.Command{Line: tc.line}, nil
				}}}}
			f := newFixtureAt(t, rt, nil, dispatch.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			rt.Env.Settings = f.st
			f.hire(t, "w-echo", domain.WorkerAI)
			f.settle(t) // waits for the run: the log is written before it returns
			for _, want := range tc.want {
				if !strings.Contains(logs.String(), want) {
					t.Errorf("server log lacks %s:\n%s", want, logs.String())
				}
			}
			acts, err := f.st.ListActivations(t.Context(), "w-echo")
			if err != nil || len(acts) != 1 {
				t.Fatalf("activations = %v, %v", acts, err)
			}
			if acts[0].Error != tc.wantError {
				t.Errorf("activation error = %q, want %q", acts[0].Error, tc.wantError)
			}
		})
	}
}
