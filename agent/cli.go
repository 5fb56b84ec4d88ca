package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/helixml/helix-org/domain"
)

// Invocation is one run of an agent CLI as the agent sees it, wherever it
// runs — on the host, in the sandbox, or in a container: the program and
// its arguments, the config files it reads, its own variables, what its
// stdin gets and how its stdout is read.
type Invocation struct {
	// Bin is the program: a name looked up on PATH, or a path.
	Bin  string
	Args []string
	// Files are written into the worker's directory before the agent
	// starts, by path relative to it: the tool's config, in its format.
	Files map[string][]byte
	// Dirs are made in the worker's directory, relative to it.
	Dirs []string
	// Env is the tool's own variables, beside RunEnv's.
	Env []string
	// Feed writes the agent's stdin.
	Feed Feed
	// Line logs one line of the agent's stdout, noting its session and
	// token use in res.
	Line func(line string, log func(domain.LogEntry), res *domain.RunResult)
}

// CLIAgent is an agent CLI that can run in a container as well as on the
// host (agent.docker.cli): it says how to run it for a run as seen from
// where it runs.
type CLIAgent interface {
	Invocation(run domain.Run) (Invocation, error)
}

var (
	_ CLIAgent = (*Claude)(nil)
	_ CLIAgent = (*Codex)(nil)
	_ CLIAgent = (*Gemini)(nil)
	_ CLIAgent = (*OpenCode)(nil)
)

// ContainerCLIs are the agent CLIs agent.docker.cli can name.
var ContainerCLIs = []string{RuntimeClaude, RuntimeCodex, RuntimeGemini, RuntimeOpenCode}

// ContainerCLI is the agent CLI name run in a container, with agent.model
// (and agent.effort for Claude Code); the container is its sandbox, so
// each may use its own tools on the workspace without asking.
func ContainerCLI(name, model, effort string) (CLIAgent, error) {
	switch name {
	case RuntimeClaude:
		return &Claude{Model: model, Effort: effort, Isolated: true}, nil
	case RuntimeCodex:
		return &Codex{Model: model, Isolated: true}, nil
	case RuntimeGemini:
		return &Gemini{Model: model}, nil
	case RuntimeOpenCode:
		return &OpenCode{Model: model}, nil
	}
	return nil, fmt.Errorf("agent CLI %q is not one a container runs (valid: %s)", name, strings.Join(ContainerCLIs, ", "))
}

// WriteFiles writes an invocation's files and directories into dir.
func (inv Invocation) WriteFiles(dir string) error {
	for _, d := range inv.Dirs {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			return err
		}
	}
	for name, data := range inv.Files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// runCLI runs a runtime's invocation for run on the host, in sb when it
// is set: name and product say what is missing when the program is not
// found.
func runCLI(ctx context.Context, run domain.Run, sb *Bwrap, name, product string, invocation func(domain.Run) (Invocation, error)) (domain.RunResult, error) {
	inv, err := invocation(run)
	if err != nil {
		return domain.RunResult{ExitStatus: -1}, err
	}
	path, err := findAgentBin(name, inv.Bin, product, sb != nil)
	if err != nil {
		return domain.RunResult{ExitStatus: -1}, err
	}
	if err := inv.WriteFiles(run.EnvDir); err != nil {
		return domain.RunResult{ExitStatus: -1}, fmt.Errorf("%s runtime: %w", name, err)
	}
	cmd := exec.Command(path, inv.Args...)
	cmd.Dir = run.EnvDir
	cmd.Env = append(Environ(run), inv.Env...)
	var res domain.RunResult
	out, err := runAgentFed(ctx, cmd, run, sb, []string{path}, inv.Feed, func(stream, line string) {
		if stream == "stderr" {
			run.Log(domain.LogEntry{Kind: domain.LogOutput, Text: "stderr: " + line})
			return
		}
		inv.Line(line, run.Log, &res)
	})
	out.InputTokens, out.OutputTokens, out.Session = res.InputTokens, res.OutputTokens, res.Session
	return out, err
}

// eventLines reads the stdout of an agent CLI that prints one JSON event
// per line (codex --json, Gemini CLI and OpenCode stream-json): each event
// of type E goes to handle; a line that is not JSON is logged as it is, so
// nothing the agent says is lost.
func eventLines[E any](handle func(ev E, log func(domain.LogEntry), res *domain.RunResult)) func(string, func(domain.LogEntry), *domain.RunResult) {
	return func(line string, log func(domain.LogEntry), res *domain.RunResult) {
		var ev E
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			if strings.TrimSpace(line) != "" {
				log(domain.LogEntry{Kind: domain.LogOutput, Text: line})
			}
			return
		}
		handle(ev, log, res)
	}
}

// withFlag adds flag and its value to a command line when value is set.
func withFlag(args []string, flag, value string) []string {
	if value == "" {
		return args
	}
	return append(args, flag, value)
}
