package llmtest

import (
	"encoding/json"

	"github.com/helixml/helix-org/agent/llm"
	"github.com/helixml/helix-org/agent/triggers"
)

// Prompt is the text of the conversation's first user message: an
// activation's prompt.
func (t Turn) Prompt() string {
	if len(t.Messages) == 0 {
		return ""
	}
	return t.Messages[0].Text
}

// Last is the newest message, which is always the user's.
func (t Turn) Last() llm.Message {
	if len(t.Messages) == 0 {
		return llm.Message{}
	}
	return t.Messages[len(t.Messages)-1]
}

// Results are the tool results the newest message carries.
func (t Turn) Results() []llm.ToolResult { return t.Last().ToolResults }

// CallsTo counts the tool calls to name the model made so far.
func (t Turn) CallsTo(name string) int {
	n := 0
	for _, m := range t.Messages {
		for _, c := range m.ToolCalls {
			if c.Name == name {
				n++
			}
		}
	}
	return n
}

// Call builds a tool call with JSON-encoded arguments.
func Call(name string, args any) llm.ToolCall {
	b, err := json.Marshal(args)
	if err != nil {
		panic(err)
	}
	return llm.ToolCall{Name: name, Input: b}
}

// Trigger is one event trigger read back out of an activation prompt.
type Trigger = triggers.Trigger

// Triggers reads the event triggers out of a prompt rendered by dispatch,
// as a model would.
func Triggers(prompt string) []Trigger { return triggers.Parse(prompt) }

// FollowRole scripts the getting-started echo worker: for every event
// trigger in the prompt it publishes the role's backticked reply template
// (from the system prompt, where the built-in agent puts role.md) on the
// trigger's stream, <body> as is and <BODY…> upper-cased; once the results
// are back, or with nothing to answer, it ends with text.
func FollowRole(t Turn) Reply {
	if len(t.Results()) > 0 {
		return Reply{Text: "Replied."}
	}
	var calls []llm.ToolCall
	for _, tr := range Triggers(t.Prompt()) {
		if body, ok := triggers.RoleReply(t.System, tr); ok {
			calls = append(calls, Call("publish", map[string]any{"stream": tr.Stream, "body": body, "inReplyTo": tr.Event}))
		}
	}
	if len(calls) == 0 {
		return Reply{Text: "Nothing to do."}
	}
	return Reply{Text: "Replying as my role says.", ToolCalls: calls}
}
