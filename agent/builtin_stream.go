package agent

import (
	"encoding/json"
	"errors"
	"io"

	"github.com/helixml/helix-org/agent/llm"
)

// streamJSON writes the built-in agent's run as Claude Code's stream-json
// (`claude -p --output-format stream-json --verbose`): a system init line,
// an assistant line per model reply, a user line per batch of tool
// results, and a result line with the run's total usage. parseStreamJSON
// reads it back into activation-log entries.
type streamJSON struct {
	enc *json.Encoder
}

func newStreamJSON(w io.Writer) *streamJSON { return &streamJSON{enc: json.NewEncoder(w)} }

type streamBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   *string         `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
}

type streamUsage struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
}

func usageOf(u llm.Usage) streamUsage {
	return streamUsage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens}
}

func (s *streamJSON) init(model string, tools []string) {
	s.enc.Encode(map[string]any{"type": "system", "subtype": "init", "model": model, "tools": tools})
}

// message writes one conversation message.
func (s *streamJSON) message(m llm.Message, u llm.Usage) {
	var blocks []streamBlock
	if m.Role == llm.RoleAssistant {
		if m.Text != "" {
			blocks = append(blocks, streamBlock{Type: "text", Text: m.Text})
		}
		for _, c := range m.ToolCalls {
			input := c.Input
			if !json.Valid(input) {
				input, _ = json.Marshal(string(input))
			}
			blocks = append(blocks, streamBlock{Type: "tool_use", ID: c.ID, Name: c.Name, Input: input})
		}
		s.enc.Encode(map[string]any{"type": "assistant", "message": map[string]any{"role": "assistant", "content": blocks, "usage": usageOf(u)}})
		return
	}
	for _, r := range m.ToolResults {
		blocks = append(blocks, streamBlock{Type: "tool_result", ToolUseID: r.CallID, Content: &r.Content, IsError: r.IsError})
	}
	if m.Text != "" {
		blocks = append(blocks, streamBlock{Type: "text", Text: m.Text})
	}
	s.enc.Encode(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": blocks}})
}

// result writes the closing line: success with the final text, or the
// error that ended the run.
func (s *streamJSON) result(l *Loop, final string, err error) {
	line := map[string]any{"type": "result", "subtype": "success", "is_error": false, "result": final}
	if err != nil {
		line["subtype"], line["is_error"], line["result"] = "error_during_execution", true, err.Error()
		if errors.As(err, new(ErrMaxTurns)) {
			line["subtype"] = "error_max_turns"
		}
	}
	var usage llm.Usage
	if l != nil {
		usage = l.Usage
		line["num_turns"] = l.Turns
	}
	line["usage"] = usageOf(usage)
	s.enc.Encode(line)
}
