package agent

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"

	"github.com/helixml/helix-org/domain"
)

// runEventCLI runs an agent CLI that prints one JSON event per line on
// stdout (codex --json, Gemini CLI and OpenCode stream-json): each event
// of type E goes to handle, which logs it and notes the session and token
// use in res; a line that is not JSON, and stderr, are logged as they are,
// so nothing the agent says is lost.
func runEventCLI[E any](ctx context.Context, cmd *exec.Cmd, run domain.Run, sb *Bwrap, bins []string,
	handle func(ev E, log func(domain.LogEntry), res *domain.RunResult)) (domain.RunResult, error) {
	var res domain.RunResult
	out, err := runAgent(ctx, cmd, run, sb, bins, func(stream, line string) {
		if stream == "stderr" {
			run.Log(domain.LogEntry{Kind: domain.LogOutput, Text: "stderr: " + line})
			return
		}
		var ev E
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			if strings.TrimSpace(line) != "" {
				run.Log(domain.LogEntry{Kind: domain.LogOutput, Text: line})
			}
			return
		}
		handle(ev, run.Log, &res)
	})
	out.InputTokens, out.OutputTokens, out.Session = res.InputTokens, res.OutputTokens, res.Session
	return out, err
}
