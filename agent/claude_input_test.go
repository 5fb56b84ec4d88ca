package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/agent/clitest"
	"github.com/helixml/helix-org/domain"
)

// steerQueue is the messages sent to a run, as Run.Steer takes them.
type steerQueue struct {
	mu    sync.Mutex
	msgs  []domain.SteerMessage
	asked int
}

func (q *steerQueue) send(from, body string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.msgs = append(q.msgs, domain.SteerMessage{From: from, Body: body, SentAt: time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)})
}

func (q *steerQueue) take(context.Context) ([]domain.SteerMessage, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.asked++
	out := q.msgs
	q.msgs = nil
	return out, nil
}

// TestClaudeTakesMessagesWhileItRuns: Claude Code (a fake in the sandbox
// that speaks stream-json and records each line of its stdin) gets its
// prompt as the first user message; a message sent while its tool runs
// reaches it as the next, once the tool's result is in; one sent as its
// turn ends, after the result, starts another turn; and once a turn ends
// with nothing more sent, its stdin closes and it exits. The log says
// what reached it.
func TestClaudeTakesMessagesWhileItRuns(t *testing.T) {
	rec := t.TempDir()
	in := filepath.Join(rec, "stdin")
	fake := `#!/bin/sh
say() { echo '{"type":"assistant","message":{"content":[{"type":"text","text":"'"$1"'"}]}}'; }
read -r line; printf '%s\n' "$line" > ` + in + `
echo '{"type":"system","subtype":"init","session_id":"s-1"}'
say "calling a tool"
echo '{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"listed"}]}}'
read -r line; printf '%s\n' "$line" >> ` + in + `
say "turn one over"
echo '{"type":"result","subtype":"success","result":"one"}'
read -r line; printf '%s\n' "$line" >> ` + in + `
echo '{"type":"result","subtype":"success","result":"two"}'
if read -r line; then printf '%s\n' "$line" >> ` + in + `; else say "stdin closed"; fi
`
	bin := filepath.Join(t.TempDir(), "claude")
	if err := os.WriteFile(bin, []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	var q steerQueue
	var log logSink
	run := newRun(t, &log)
	run.Steer = q.take
	run.Log = func(e domain.LogEntry) {
		log.add(e)
		switch e.Text { // called in order, before the next line is read
		case "calling a tool":
			q.send("w-owner", "Stop listing and summarise.")
		case "turn one over":
			q.send("w-lead", "One more thing:\nadd a title.")
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	res, err := (&agent.Claude{Bin: bin, Sandbox: sandbox(t, agent.SandboxPaths{Writable: []string{rec}})}).Run(ctx, run)
	if err != nil || res.ExitStatus != 0 {
		t.Fatalf("run = %+v, %v; log %q", res, err, log.texts())
	}
	data, _ := os.ReadFile(in)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("claude read %d lines on stdin, want the prompt and two messages:\n%s", len(lines), data)
	}
	want := []string{"hello prompt",
		"Message from w-owner, sent to you while you work (2026-05-01T09:00:00Z):\nStop listing and summarise.",
		"Message from w-lead, sent to you while you work (2026-05-01T09:00:00Z):\nOne more thing:\nadd a title."}
	for i, line := range lines {
		if got := clitest.ClaudePrompt(t, line); got != want[i] {
			t.Errorf("stdin line %d = %q, want %q", i+1, got, want[i])
		}
	}
	texts := log.texts()
	for _, w := range []string{"note::steering: passed 1 message(s) from w-owner to the running agent",
		"note::steering: passed 1 message(s) from w-lead to the running agent", "assistant::stdin closed"} {
		if !slices.Contains(texts, w) {
			t.Errorf("log lacks %q: %q", w, texts)
		}
	}
}

// TestClaudeWithoutSteeringClosesStdin: a run no message can reach (no
// Run.Steer) closes Claude Code's stdin after the prompt, so an agent
// that reads to its end goes on at once.
func TestClaudeWithoutSteeringClosesStdin(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "claude")
	os.WriteFile(bin, []byte("#!/bin/sh\nn=$(wc -l)\necho \"read $n line(s)\"\n"), 0o755)
	var log logSink
	res, err := (&agent.Claude{Bin: bin}).Run(t.Context(), newRun(t, &log))
	if err != nil || res.ExitStatus != 0 || !slices.Contains(log.texts(), "output::read 1 line(s)") {
		t.Errorf("run = %+v, %v; log %q", res, err, log.texts())
	}
}
