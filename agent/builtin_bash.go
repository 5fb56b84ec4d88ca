package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/helixml/helix-org/agent/llm"
)

// BashToolName is the name the model calls the shell by.
const BashToolName = "bash"

// Bash is the built-in agent's optional shell: one command at a time in
// the environment directory, killed after Timeout, its output capped.
type Bash struct {
	Dir string
	// Env is the commands' whole environment; never the provider key.
	Env       []string
	Timeout   time.Duration
	MaxOutput int
}

// Bash defaults.
const (
	DefaultBashTimeout   = 2 * time.Minute
	DefaultBashMaxOutput = 32 << 10
)

// Spec describes the tool to the model.
func (b *Bash) Spec() llm.Tool {
	return llm.Tool{Name: BashToolName,
		Description: fmt.Sprintf("Run a shell command in your working directory (which holds role.md, identity.md, agent.md and mcp.json). "+
			"Each command runs on its own, is killed after %s, and its output (stdout and stderr) is cut at %d bytes.", b.timeout(), b.maxOutput()),
		Schema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string","description":"the command line, run with bash -c"}},"required":["command"],"additionalProperties":false}`)}
}

func (b *Bash) timeout() time.Duration {
	if b.Timeout > 0 {
		return b.Timeout
	}
	return DefaultBashTimeout
}

func (b *Bash) maxOutput() int {
	if b.MaxOutput > 0 {
		return b.MaxOutput
	}
	return DefaultBashMaxOutput
}

// Run runs args["command"] and reports its output; a failure or a
// non-zero exit is an error result.
func (b *Bash) Run(ctx context.Context, args map[string]any) (string, bool) {
	command, _ := args["command"].(string)
	if strings.TrimSpace(command) == "" {
		return `bash needs {"command": "<command line>"}`, true
	}
	shell, err := exec.LookPath("bash")
	if err != nil {
		shell = "/bin/sh"
	}
	cmd := exec.Command(shell, "-c", command)
	cmd.Dir, cmd.Env = b.Dir, b.Env
	ctx, cancel := context.WithTimeout(ctx, b.timeout())
	defer cancel()
	var out strings.Builder
	truncated := false
	code, err := runProcess(ctx, cmd, "", func(_, line string) {
		// Once cut, stay cut: later short lines would leave silent holes.
		if truncated || out.Len()+len(line)+1 > b.maxOutput() {
			truncated = true
			return
		}
		out.WriteString(line + "\n")
	})
	text := out.String()
	if truncated {
		text += fmt.Sprintf("… (output cut at %d bytes)\n", b.maxOutput())
	}
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return text + fmt.Sprintf("command timed out after %s and was killed", b.timeout()), true
	case err != nil:
		return text + err.Error(), true
	case code != 0:
		return text + fmt.Sprintf("exit status %d", code), true
	}
	if text == "" {
		text = "(no output)"
	}
	return text, false
}

// RoleAsksForBash reports whether role.md opens with front matter that
// once turned the bash tool on:
//
//	---
//	bash: true
//	---
//
// It no longer does (only agent.bash does); the server notes on the
// activation log that it was ignored.
func RoleAsksForBash(role string) bool { return roleFrontMatter(role, "bash") == "true" }
