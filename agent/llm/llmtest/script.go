package llmtest

import (
	"encoding/json"
	"regexp"
	"strings"

	"github.com/helixml/helix-org/agent/llm"
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

// Trigger is one event trigger read back out of an activation prompt:
// its event and stream, the envelope fields a model routes by, and the body.
type Trigger struct {
	Event, Stream, Body string
	// Source is the publishing worker's id, empty for the outside world.
	Source                      string
	From, Subject, ThreadID, To string
}

var triggerLine = regexp.MustCompile(`^\[\d+/\d+\] event (\S+) on stream (\S+) `)

// Triggers reads the event triggers out of a prompt rendered by dispatch,
// as a model would.
func Triggers(prompt string) []Trigger {
	var out []Trigger
	var cur *Trigger
	inBody := false
	for _, line := range strings.Split(prompt, "\n") {
		if m := triggerLine.FindStringSubmatch(line); m != nil {
			out = append(out, Trigger{Event: m[1], Stream: m[2]})
			cur, inBody = &out[len(out)-1], false
			continue
		}
		switch {
		case strings.HasPrefix(line, "["):
			cur = nil
		case cur == nil:
		case line == "  body:":
			inBody = true
		case !inBody:
			cur.header(line)
		case inBody && strings.HasPrefix(line, "    "):
			if cur.Body != "" {
				cur.Body += "\n"
			}
			cur.Body += strings.TrimPrefix(line, "    ")
		}
	}
	return out
}

var template = regexp.MustCompile("`([^`]*<(?:body|BODY[^>]*)>[^`]*)`")

// FollowRole scripts the getting-started echo worker: for every event
// trigger in the prompt it publishes the role's backticked reply template
// (from the system prompt, where the built-in agent puts role.md) on the
// trigger's stream, <body> as is and <BODY…> upper-cased; once the results
// are back, or with nothing to answer, it ends with text.
func FollowRole(t Turn) Reply {
	if len(t.Results()) > 0 {
		return Reply{Text: "Replied."}
	}
	m := template.FindStringSubmatch(t.System)
	trigs := Triggers(t.Prompt())
	if m == nil || len(trigs) == 0 {
		return Reply{Text: "Nothing to do."}
	}
	var calls []llm.ToolCall
	for _, tr := range trigs {
		body := strings.ReplaceAll(m[1], "<body>", tr.Body)
		body = regexp.MustCompile(`<BODY[^>]*>`).ReplaceAllString(body, strings.ToUpper(tr.Body))
		calls = append(calls, Call("publish", map[string]any{"stream": tr.Stream, "body": body, "inReplyTo": tr.Event}))
	}
	return Reply{Text: "Replying as my role says.", ToolCalls: calls}
}

// header records one "  key: value" line of a trigger.
func (t *Trigger) header(line string) {
	k, v, ok := strings.Cut(strings.TrimPrefix(line, "  "), ": ")
	if !ok {
		return
	}
	switch k {
	case "source":
		if id, _, _ := strings.Cut(v, " "); strings.HasPrefix(id, "w-") {
			t.Source = id
		}
	case "from":
		t.From = v
	case "to":
		t.To = v
	case "subject":
		t.Subject = v
	case "threadId":
		t.ThreadID = v
	}
}
