package agent

import (
	"context"
	"errors"
	"os/exec"

	"github.com/helixml/helix-org/domain"
)

// Command runs any command line as the agent: in the worker's environment
// directory, prompt on stdin, HELIX_ORG_* variables set, each output line
// logged on the activation stream.
type Command struct {
	Line string
	// Sandbox, when set, is where the command runs; nil runs it on the
	// host as the server's user.
	Sandbox *Bwrap
}

var _ domain.Runtime = (*Command)(nil)

// Run carries out one activation.
func (c *Command) Run(ctx context.Context, run domain.Run) (domain.RunResult, error) {
	if c.Line == "" {
		return domain.RunResult{ExitStatus: -1}, errors.New("agent.command is not set: set it with `helix-org config set agent.command '<command line>'`")
	}
	cmd := exec.Command("/bin/sh", "-c", c.Line)
	cmd.Dir = run.EnvDir
	cmd.Env = Environ(run)
	return runAgent(ctx, cmd, run, c.Sandbox, nil, func(stream, line string) {
		if stream == "stderr" {
			line = "stderr: " + line
		}
		run.Log(domain.LogEntry{Kind: domain.LogOutput, Text: trimCR(line)})
	})
}
