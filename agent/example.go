package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/helixml/helix-org/agent/llm"
	"github.com/helixml/helix-org/agent/triggers"
	"github.com/helixml/helix-org/domain"
)

// ExampleProvider is the built-in agent's stand-in for a model on the
// example runtime: it follows a rule in the worker's role instead, so an
// AI worker answers on a machine with no model and no network.
const ExampleProvider = "example"

// exampleModel answers every message that woke the run on its stream, in
// reply: with the reply the role's rule gives (triggers.RoleReply), or,
// when the role has none, with a note saying how to give it one or a
// model. It is deterministic and costs nothing, and it acts only through
// the worker's MCP tools like any model.
type exampleModel struct {
	role, self string
}

var _ llm.Provider = exampleModel{}

func (m exampleModel) Complete(_ context.Context, req llm.Request) (llm.Response, error) {
	if len(req.Messages) == 0 {
		return llm.Response{}, fmt.Errorf("example agent: no prompt")
	}
	if res := req.Messages[len(req.Messages)-1].ToolResults; len(res) > 0 {
		if err := refused(res); err != nil {
			return llm.Response{}, err
		}
		return m.say("Answered."), nil
	}
	var calls []llm.ToolCall
	for i, t := range triggers.Parse(req.Messages[0].Text) {
		if t.Source == m.self || t.Body == "" || systemStream(t.Stream) {
			continue
		}
		body, ok := triggers.RoleReply(m.role, t)
		if !ok {
			body = "(The example agent answers here: no model is configured, and my role has no reply rule, such as " +
				"`echo: <body>` in backticks. Give me one with update_role, or a model with `helix-org config set agent.model <model>`.) " +
				"You wrote: " + t.Body
		}
		in, err := json.Marshal(map[string]string{"stream": t.Stream, "body": body, "inReplyTo": t.Event})
		if err != nil {
			return llm.Response{}, err
		}
		calls = append(calls, llm.ToolCall{ID: fmt.Sprintf("example-%d", i+1), Name: "publish", Input: in})
	}
	if len(calls) == 0 {
		return m.say("Nothing here for me to answer."), nil
	}
	if !offers(req.Tools, "publish") && !offers(req.Tools, FindToolsName) {
		return llm.Response{}, fmt.Errorf("could not answer: %s holds no grant of publish; its manager can give it one with grant_tool {\"worker\": %q, \"tool\": \"publish\"}", m.self, m.self)
	}
	resp := m.say("Answering as my role says.")
	resp.Message.ToolCalls, resp.StopReason = calls, "tool_use"
	return resp, nil
}

func (exampleModel) say(text string) llm.Response {
	return llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Text: text}, StopReason: "end_turn"}
}

func offers(tools []llm.Tool, name string) bool {
	return slices.ContainsFunc(tools, func(t llm.Tool) bool { return t.Name == name })
}

// refused is what the server refused of the example agent's answers, as
// the run's error: an answer that was not sent fails the run, so it shows
// as failed where people look (the activations, a manager's inbox) rather
// than as a success with the reason buried in its log.
func refused(res []llm.ToolResult) error {
	var failed []string
	for _, r := range res {
		if r.IsError {
			failed = append(failed, r.Content)
		}
	}
	if len(failed) == 0 {
		return nil
	}
	return fmt.Errorf("could not answer: %s", strings.Join(failed, "; "))
}

// systemStream: the server's own streams (the org's record, inboxes,
// activation logs, ...) are not conversations to answer.
func systemStream(id string) bool {
	if slices.Contains(domain.ReservedStreamIDs, id) {
		return true
	}
	kind, _ := domain.StreamKindOf(id)
	return kind != domain.StreamShared && kind != domain.StreamDM
}
