package agent_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/agent/clitest"
	"github.com/helixml/helix-org/domain"
)

// hostCLIs are the runtimes of the agent CLIs, by name, on the host.
var hostCLIs = map[string]func(sb *agent.Bwrap) domain.Runtime{
	"claude":   func(sb *agent.Bwrap) domain.Runtime { return &agent.Claude{Sandbox: sb} },
	"codex":    func(sb *agent.Bwrap) domain.Runtime { return &agent.Codex{Sandbox: sb} },
	"gemini":   func(sb *agent.Bwrap) domain.Runtime { return &agent.Gemini{Sandbox: sb} },
	"opencode": func(sb *agent.Bwrap) domain.Runtime { return &agent.OpenCode{Sandbox: sb} },
}

// TestAgentCLIsGetPromptEndpointAndRelay runs, for each agent CLI, a fake
// of that name on PATH in the sandbox, which records what it was given:
// the prompt (over 200 KiB) arrives whole on stdin and not in argv; the
// MCP config parses in the tool's documented format and names only the
// worker's endpoint, its token passed in the environment, in no file; the
// relay's base URL and the run's token are in the tool's variables; no
// provider key of the server's is anywhere it can read; and the session
// id it reports comes back for the next run.
func TestAgentCLIsGetPromptEndpointAndRelay(t *testing.T) {
	// Made at run time, so the fake's search does not find it in the
	// test binary or in the fake itself, both of which the sandbox binds.
	canary := fmt.Sprintf("sk-provider-%d-%d", os.Getpid(), time.Now().UnixNano())
	for _, k := range []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "CODEX_API_KEY"} {
		t.Setenv(k, canary)
	}
	prompt := strings.Repeat("helix-org prompt ", 300<<10/17) + "END"
	for _, tc := range clitest.Cases(domain.Run{BaseURL: "http://127.0.0.1:1", Token: "hxa_run_token", MCPURL: "http://127.0.0.1:1/workers/w-echo/mcp"}) {
		t.Run(tc.Name, func(t *testing.T) {
			rec, bin := t.TempDir(), t.TempDir()
			if err := os.WriteFile(filepath.Join(bin, tc.Name), []byte(tc.Fake(rec, canary)), 0o755); err != nil {
				t.Fatal(err)
			}
			t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
			var log logSink
			run := newRun(t, &log)
			run.Token, run.Prompt = "hxa_run_token", prompt
			// dispatch writes mcp.json for every run; the others write their own.
			os.WriteFile(filepath.Join(run.EnvDir, "mcp.json"), domain.MCPConfig(), 0o600)
			res, err := hostCLIs[tc.Name](sandbox(t, agent.SandboxPaths{Writable: []string{rec}})).Run(t.Context(), run)
			if err != nil || res.ExitStatus != 0 {
				t.Fatalf("run = %+v, %v; log %q", res, err, log.texts())
			}
			tc.Check(t, run, rec, prompt, canary)
			clitest.NoTokenInFiles(t, run.EnvDir, "", run.Token)
			if res.Session != clitest.Session {
				t.Errorf("session = %q, want the one the CLI reported, %s", res.Session, clitest.Session)
			}
		})
	}
}
