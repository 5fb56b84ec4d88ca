package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/agent/clitest"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store/storetest"
)

// TestPreservedContextResumesTheSession: a worker whose role says
// `preserve_context: true` runs four times on each agent CLI (a fake that
// reports the session it was told to resume, else a new one): the second
// and third runs pass the first's session id to the CLI's resume option
// and say so on their log; a day later the session is past
// agent.session_max_age, so the fourth starts fresh and its log says why.
// A worker the operator turns off (agent.preserve_context) never resumes.
func TestPreservedContextResumesTheSession(t *testing.T) {
	resume := map[string]string{"claude": "--resume", "codex": "resume", "gemini": "--resume", "opencode": "--session"}
	for _, tc := range clitest.Cases(domain.Run{}) {
		t.Run(tc.Name, func(t *testing.T) {
			rec, bin := t.TempDir(), t.TempDir()
			line := tc.Output(`'"$id"'`)
			fake := "#!/bin/sh\nprintf '%s ' \"$@\" >> " + rec + "/args; echo >> " + rec + "/args\ncat >/dev/null\n" +
				"id=; for a; do case $a in sess-*) id=$a;; esac; done\n[ -n \"$id\" ] || id=sess-$(date +%s%N)\necho '" + line + "'\n"
			if err := os.WriteFile(filepath.Join(bin, tc.Name), []byte(fake), 0o755); err != nil {
				t.Fatal(err)
			}
			t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
			clock := storetest.NewClock(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
			st := storetest.New(t)
			ctx := t.Context()
			for spec, v := range map[*domain.SettingSpec]string{&agent.RuntimeSetting: tc.Name, &agent.SandboxPathsSetting: `{"rw":["` + rec + `"]}`} {
				if err := st.SetSetting(ctx, *spec, v); err != nil {
					t.Fatal(err)
				}
			}
			sel := agent.Selector{Env: agent.RuntimeEnv{Settings: st, Sessions: st, Now: clock.Now, Sandbox: agent.CheckSandbox(ctx, "").Result,
				RoleOf: func(context.Context, string) (domain.Role, error) {
					return domain.Role{ID: "r-dev", Content: "---\npreserve_context: true\n---\nBuild things."}, nil
				}}}
			envDir := t.TempDir()
			os.WriteFile(filepath.Join(envDir, "mcp.json"), domain.MCPConfig(), 0o600)
			activate := func(worker string) (domain.RunResult, string, string) {
				var log logSink
				run := newRun(t, &log)
				run.WorkerID, run.EnvDir = worker, envDir
				res, err := sel.Run(ctx, run)
				if err != nil || res.ExitStatus != 0 {
					t.Fatalf("run = %+v, %v; log %q", res, err, log.texts())
				}
				data, _ := os.ReadFile(filepath.Join(rec, "args"))
				lines := strings.Split(strings.TrimSpace(string(data)), "\n")
				return res, lines[len(lines)-1] + " ", strings.Join(log.texts(), "\n")
			}
			first, args, _ := activate("w-dev")
			if first.Session == "" || first.Continued || strings.Contains(args, "sess-") {
				t.Fatalf("first run: session %q continued %v, args %q; want a new session", first.Session, first.Continued, args)
			}
			for i := 2; i <= 3; i++ {
				clock.Advance(time.Hour)
				res, args, log := activate("w-dev")
				if want := resume[tc.Name] + " " + first.Session + " "; !strings.Contains(args, want) {
					t.Errorf("run %d args %q lack %q", i, args, want)
				}
				if res.Session != first.Session || !res.Continued {
					t.Errorf("run %d: session %q continued %v, want %q continued", i, res.Session, res.Continued, first.Session)
				}
				if want := "note::continuing " + tc.Name + " session " + first.Session; !strings.Contains(log, want) {
					t.Errorf("run %d log lacks %q:\n%s", i, want, log)
				}
			}
			clock.Advance(24 * time.Hour)
			res, args, log := activate("w-dev")
			if strings.Contains(args, first.Session) || res.Continued || res.Session == first.Session {
				t.Errorf("a day later: args %q, session %q continued %v; want a fresh session", args, res.Session, res.Continued)
			}
			if want := "(" + first.Session + ") is not resumed: it began 26h0m0s ago, past agent.session_max_age 24h0m0s"; !strings.Contains(log, want) {
				t.Errorf("a day later the log lacks %q:\n%s", want, log)
			}
			if err := st.SetSetting(ctx, agent.PreserveContextSetting, `{"w-off":false}`); err != nil {
				t.Fatal(err)
			}
			activate("w-off")
			if res, args, _ := activate("w-off"); strings.Contains(args, "sess-") || res.Continued {
				t.Errorf("a worker turned off resumed: args %q", args)
			}
		})
	}
}
