package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/agent/clitest"
	"github.com/helixml/helix-org/agent/llm"
	"github.com/helixml/helix-org/agent/llm/llmtest"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
)

var activationInPrompt = regexp.MustCompile(`This is activation (a-[0-9a-z-]+)\.`)

// TestBuiltinSteering: a message sent with message_activation while the
// built-in agent's model is thinking reaches the model in its next
// request, beside the results of the tool it called, for each wire format.
func TestBuiltinSteering(t *testing.T) {
	for _, format := range llmFormats {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			running := make(chan string, 1)
			sent := make(chan struct{})
			var mu sync.Mutex
			var after []llm.Message // the request after the message was sent
			o := newBuiltinOrg(t, format, "List the streams.", func(turn llmtest.Turn) llmtest.Reply {
				switch {
				case len(llmtest.Triggers(turn.Prompt())) == 0:
					return llmtest.Reply{Text: "Nothing to do."}
				case turn.CallsTo("list_streams") == 0:
					running <- activationInPrompt.FindStringSubmatch(turn.Prompt())[1]
					select { // the model "thinks" until the message is sent
					case <-sent:
					case <-time.After(30 * time.Second):
					}
					return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("list_streams", map[string]any{})}}
				}
				mu.Lock()
				after = turn.Messages
				mu.Unlock()
				return llmtest.Reply{Text: "Summarised, as asked."}
			})
			servertest.Call[map[string]any](t, o.owner, "publish", map[string]any{"stream": "s-inbox", "body": "which streams?"})
			var act string
			select {
			case act = <-running:
			case <-time.After(30 * time.Second):
				t.Fatal("the run never reached its model")
			}
			out := servertest.Call[map[string]any](t, o.owner, "message_activation", map[string]any{"activation": act, "body": "Stop listing and summarise."})
			close(sent)
			if out["workerId"] != "w-echo" || !strings.Contains(out["delivery"].(string), "before its next model turn") {
				t.Errorf("message_activation = %v", out)
			}
			waitIdle(t, o.st)
			mu.Lock()
			defer mu.Unlock()
			if len(after) == 0 {
				t.Fatal("the model got no request after the tool call")
			}
			// Anthropic sends the message beside the tool's result in one
			// user message; Chat Completions as a user message after it.
			var results int
			var said string
			for _, m := range after[2:] {
				results += len(m.ToolResults)
				said += m.Text
			}
			if results != 1 || !strings.Contains(said, "Message from w-owner") || !strings.Contains(said, "Stop listing and summarise.") {
				t.Errorf("the request after the message ends with %+v, want the list_streams result and the message", after[2:])
			}
			wantAll(t, "activation log", o.logOf(t), "Stop listing and summarise.", "assistant: Summarised, as asked.", "exit: succeeded")
		})
	}
}

// steeredClaude is Claude Code taking a message while it runs: after its
// prompt it calls a tool that lasts until steer-go appears in its
// directory; with the tool's result in, it reads the next user message
// on its stdin and says it, ends its turn, and says whether its stdin
// then closed.
func steeredClaude() int {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	in := bufio.NewReader(os.Stdin)
	in.ReadString('\n')
	out := json.NewEncoder(os.Stdout)
	block := func(b map[string]any) map[string]any { return map[string]any{"content": []map[string]any{b}} }
	say := func(text string) {
		out.Encode(map[string]any{"type": "assistant", "message": block(map[string]any{"type": "text", "text": text})})
	}
	out.Encode(map[string]any{"type": "system", "subtype": "init", "session_id": "s-steered"})
	out.Encode(map[string]any{"type": "assistant", "message": block(map[string]any{"type": "tool_use", "id": "t1", "name": "mcp__helix-org__list_streams", "input": map[string]any{}})})
	if _, err := waitForFile(ctx, "steer-go"); err != nil {
		say("no steer-go: " + err.Error())
		return 1
	}
	out.Encode(map[string]any{"type": "user", "message": block(map[string]any{"type": "tool_result", "tool_use_id": "t1", "content": "s-inbox"})})
	line, err := in.ReadString('\n')
	var m struct {
		Message struct {
			Content string `json:"content"`
		} `json:"message"`
	}
	if err != nil || json.Unmarshal([]byte(line), &m) != nil {
		say(fmt.Sprintf("no message after the tool's result: %v %q", err, line))
		return 1
	}
	say("got: " + m.Message.Content)
	out.Encode(map[string]any{"type": "result", "subtype": "success", "is_error": false, "result": "done"})
	if _, err := in.ReadString('\n'); err == io.EOF {
		say("stdin closed")
	}
	return 0
}

// TestClaudeSteering: a message sent with message_activation while Claude
// Code (a fake on PATH, in the sandbox) waits on a tool reaches it as its
// next user message once the tool's result is in — the same run takes
// it, so no other run is woken for it — and the activation log shows it
// sent and passed on; its turn over, its stdin closes and the run ends.
func TestClaudeSteering(t *testing.T) {
	bin := t.TempDir()
	exe, _ := os.Executable()
	script := "#!/bin/sh\nHELIX_ORG_TEST_AGENT=claude-steered exec " + exe + " \"$@\"\n"
	clitest.WriteExecutable(t, filepath.Join(bin, "claude"), script)
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "helix-org.db"), store.Options{Transports: transports.Specs()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := t.Context()
	runsOrg(t, st)
	st.SetSetting(ctx, agent.RuntimeSetting, agent.RuntimeClaude)
	hireAI(t, st, "w-reader")
	_, envs, owner := startServe(t, st, io.Discard)
	var act string
	until(t, time.Minute, "the hire's run to call its tool", func() bool {
		return strings.Contains(logText(t, st, "w-reader"), "tool_call")
	})
	acts, _ := st.ListActivations(ctx, "w-reader")
	if len(acts) != 1 || acts[0].Status != domain.ActivationRunning {
		t.Fatalf("activations = %+v, want the one running", acts)
	}
	act = acts[0].ID
	out := servertest.Call[map[string]any](t, owner, "message_activation", map[string]any{"activation": act, "body": "Summarise instead."})
	if d, _ := out["delivery"].(string); !strings.Contains(d, "Claude Code") {
		t.Errorf("delivery = %q, want it to say Claude Code takes it while it runs", d)
	}
	if err := os.WriteFile(filepath.Join(envs, "w-reader", "steer-go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, st)
	wantAll(t, "activation log", logText(t, st, "w-reader"), "w-owner sent activation "+act+" a message:\nSummarise instead.",
		"steering: passed 1 message(s) from w-owner to the running agent",
		"assistant: got: Message from w-owner, sent to you while you work (", "):\nSummarise instead.",
		"assistant: stdin closed", "exit: succeeded")
	if acts, _ := st.ListActivations(ctx, "w-reader"); len(acts) != 1 {
		t.Errorf("%d activations, want the one that took the message", len(acts))
	}
}
