package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/domain"
)

// TestStopAsksThenKills: a stopped run's agent (a fake codex in the
// sandbox) is sent SIGTERM; one that ends on it is "stopped", one that
// ignores it is killed once StopGrace is up, and the run's result and log
// say which.
func TestStopAsksThenKills(t *testing.T) {
	for _, tt := range []struct {
		name, trap string
		want       string
	}{
		{"ends when asked", `trap 'exit 0' TERM`, agent.StopStopped},
		{"ignores SIGTERM", `trap '' TERM`, agent.StopKilled},
	} {
		t.Run(tt.name, func(t *testing.T) {
			bin := t.TempDir()
			fake := "#!/bin/sh\n" + tt.trap + "\ncat >/dev/null\necho ready\nwhile :; do sleep 0.05; done\n"
			if err := os.WriteFile(filepath.Join(bin, "codex"), []byte(fake), 0o755); err != nil {
				t.Fatal(err)
			}
			var log logSink
			ctx, cancel := context.WithCancel(t.Context())
			run := uniqueRun(t, &log)
			run.Log = func(e domain.LogEntry) {
				log.add(e)
				if e.Text == "ready" {
					cancel()
				}
			}
			start := time.Now()
			res, err := (&agent.Codex{Bin: filepath.Join(bin, "codex"), Sandbox: sandbox(t, agent.SandboxPaths{})}).Run(ctx, run)
			took := time.Since(start)
			if err == nil || res.Stop != tt.want {
				t.Errorf("run = %+v, %v; want stop %q", res, err, tt.want)
			}
			if took > agent.StopGrace+3*time.Second {
				t.Errorf("stop took %s, past the %s bound", took, agent.StopGrace)
			}
			if tt.want == agent.StopStopped && took >= agent.StopGrace {
				t.Errorf("an agent that ended on SIGTERM took %s to stop", took)
			}
			want := map[string]string{agent.StopStopped: "note::stop: the agent ended when asked (SIGTERM): stopped",
				agent.StopKilled: "note::stop: the agent did not end within 5s of SIGTERM: killed (SIGKILL)"}[tt.want]
			if !slices.Contains(log.texts(), want) {
				t.Errorf("log lacks %q: %q", want, log.texts())
			}
		})
	}
}
