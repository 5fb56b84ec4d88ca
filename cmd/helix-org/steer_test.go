package main

import (
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/helixml/helix-org/agent/llm"
	"github.com/helixml/helix-org/agent/llm/llmtest"
	"github.com/helixml/helix-org/server/servertest"
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
