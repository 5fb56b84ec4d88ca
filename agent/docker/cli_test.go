package docker_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/agent/clitest"
	"github.com/helixml/helix-org/agent/docker"
	"github.com/helixml/helix-org/agent/docker/dockertest"
	"github.com/helixml/helix-org/domain"
)

// insideRun is a run as the container sees it (newRuntime's MCP base).
func insideRun(r domain.Run) domain.Run {
	r.EnvDir, r.BaseURL = docker.Workspace, "http://192.0.2.1:9"
	r.MCPURL = domain.MCPURL(r.BaseURL, r.WorkerID)
	return r
}

// TestAgentCLIsInContainers: with agent.docker.cli set, a container runs
// that agent CLI — a fake of its name on the image's PATH that records
// what it was given into the workspace — as its host runtime does: the
// prompt (over 200 KiB) arrives whole on stdin; the config it reads
// parses in the tool's documented format and names only the worker's
// endpoint as the container reaches it, with the token passed in the
// environment, in no file; the relay's base URL and the run's token are
// in its environment; the server's provider key is nowhere in it; and
// the session it reports comes back.
func TestAgentCLIsInContainers(t *testing.T) {
	t.Parallel()
	canary := fmt.Sprintf("sk-provider-%d-%d", os.Getpid(), time.Now().UnixNano())
	var log logSink
	cases := clitest.Cases(insideRun(newRun(t, &log)))
	fakes, dir := map[string]string{}, t.TempDir()
	for _, tc := range cases {
		path := filepath.Join(dir, tc.Name)
		clitest.WriteExecutable(t, path, tc.Fake(docker.Workspace+"/rec", canary))
		fakes["/usr/local/bin/"+tc.Name] = path
	}
	img := dockertest.Image(t, shared.eng, fakes)
	prompt := strings.Repeat("helix-org prompt ", 300<<10/17) + "END"
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			var log logSink
			r := newRun(t, &log)
			r.Prompt = prompt
			rt := newRuntime(shared.eng, img)
			rt.CLI, rt.Model = tc.Name, "m-1"
			// The built-in agent's config, as the runtime table hands it
			// over, here holding a provider key: no CLI container gets it.
			rt.LLM = &agent.LLMConfig{Provider: "anthropic", Model: "m-1", APIKey: canary}
			res, err := rt.Run(t.Context(), r)
			if err != nil || res.ExitStatus != 0 {
				t.Fatalf("run = %+v, %v; log:\n%s", res, err, log.text())
			}
			rec := filepath.Join(r.EnvDir, "rec")
			tc.Check(t, insideRun(r), rec, prompt, canary)
			clitest.NoTokenInFiles(t, r.EnvDir, rec, r.Token)
			if res.Session != clitest.Session {
				t.Errorf("session = %q, want the one the CLI reported, %s", res.Session, clitest.Session)
			}
			assertNoContainers(t, shared.eng, r.ActivationID)
		})
	}
}

// TestClaudeInAContainerTakesMessages: Claude Code in a container (a fake
// that speaks stream-json) gets a message sent to its run while its tool
// runs as its next user message, and its stdin closes once its turn ends
// with nothing more sent.
func TestClaudeInAContainerTakesMessages(t *testing.T) {
	t.Parallel()
	fake := filepath.Join(t.TempDir(), "claude")
	os.WriteFile(fake, []byte(`#!/bin/sh
say() { echo '{"type":"assistant","message":{"content":[{"type":"text","text":"'"$1"'"}]}}'; }
read -r line; printf '%s\n' "$line" > /workspace/stdin
say "calling a tool"
echo '{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"listed"}]}}'
read -r line; printf '%s\n' "$line" >> /workspace/stdin
echo '{"type":"result","subtype":"success","result":"done"}'
if read -r line; then printf '%s\n' "$line" >> /workspace/stdin; else say "stdin closed"; fi
`), 0o755)
	img := dockertest.Image(t, shared.eng, map[string]string{"/usr/local/bin/claude": fake})
	var log logSink
	r := newRun(t, &log)
	var sent atomic.Bool // the message, sent while the tool runs, and not yet taken
	log.onLine = func(line string) {
		if line == "calling a tool" {
			sent.Store(true)
		}
	}
	r.Steer = func(context.Context) ([]domain.SteerMessage, error) {
		if !sent.Swap(false) {
			return nil, nil
		}
		return []domain.SteerMessage{{From: "w-owner", Body: "Summarise instead.", SentAt: time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)}}, nil
	}
	rt := newRuntime(shared.eng, img)
	rt.CLI = agent.RuntimeClaude
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if res, err := rt.Run(ctx, r); err != nil || res.ExitStatus != 0 {
		t.Fatalf("run = %+v, %v; log:\n%s", res, err, log.text())
	}
	data, _ := os.ReadFile(filepath.Join(r.EnvDir, "stdin"))
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 2 || clitest.ClaudePrompt(t, lines[0]) != r.Prompt ||
		clitest.ClaudePrompt(t, lines[1]) != "Message from w-owner, sent to you while you work (2026-05-01T09:00:00Z):\nSummarise instead." {
		t.Errorf("claude's stdin = %q, want the prompt and the message", data)
	}
	for _, w := range []string{"note::steering: passed 1 message(s) from w-owner to the running agent", "assistant::stdin closed"} {
		if !strings.Contains(log.text(), w) {
			t.Errorf("log lacks %q:\n%s", w, log.text())
		}
	}
}
