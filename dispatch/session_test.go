package dispatch_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/domain"
)

// runtimeFunc is a domain.Runtime made of a function.
type runtimeFunc func(ctx context.Context, run domain.Run) (domain.RunResult, error)

func (f runtimeFunc) Run(ctx context.Context, run domain.Run) (domain.RunResult, error) {
	return f(ctx, run)
}

var sessionLine = regexp.MustCompile(`\nsession: (sess-\d+) \((new|continued)\)`)

// TestRunRecordNamesItsSession: for a worker that preserves its context,
// the record of each run (its exit entry) names the agent CLI's session
// (a fake codex that reports the session it resumes, else a new one) and
// says whether the run continued it: the first's is new, the next's the
// same one, continued.
func TestRunRecordNamesItsSession(t *testing.T) {
	bin := t.TempDir()
	fake := "#!/bin/sh\ncat >/dev/null\nid=; for a; do case $a in sess-*) id=$a;; esac; done\n[ -n \"$id\" ] || id=sess-$$\n" +
		"echo '{\"type\":\"thread.started\",\"thread_id\":\"'$id'\"}'\n"
	if err := os.WriteFile(filepath.Join(bin, "codex"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	var sel agent.Selector
	f := newFixtureWith(t, runtimeFunc(func(ctx context.Context, run domain.Run) (domain.RunResult, error) { return sel.Run(ctx, run) }))
	sel = agent.Selector{Env: agent.RuntimeEnv{Settings: f.st, Sessions: f.st, Sandbox: agent.CheckSandbox(t.Context(), "").Result,
		RoleOf: func(ctx context.Context, worker string) (domain.Role, error) { return domain.Role{ID: "r-echo"}, nil }}}
	for spec, v := range map[*domain.SettingSpec]string{&agent.RuntimeSetting: agent.RuntimeCodex, &agent.PreserveContextSetting: `{"w-echo":true}`} {
		if err := f.st.SetSetting(t.Context(), *spec, v); err != nil {
			t.Fatal(err)
		}
	}
	f.hire(t, "w-echo", domain.WorkerAI)
	f.settle(t)
	f.publish(t, "w-owner", "again")
	f.settle(t)
	var got [][]string
	for _, e := range activationLog(t, f.st, "w-echo") {
		if strings.HasPrefix(e, "exit: ") {
			got = append(got, sessionLine.FindStringSubmatch(e))
		}
	}
	if len(got) != 2 || got[0] == nil || got[1] == nil || got[0][2] != "new" || got[1][1] != got[0][1] || got[1][2] != "continued" {
		t.Errorf("the runs' records name sessions %q; want a new one, then the same continued:\n%s", got, strings.Join(activationLog(t, f.st, "w-echo"), "\n"))
	}
}
