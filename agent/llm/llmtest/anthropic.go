package llmtest

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/helixml/helix-org/agent/llm"
)

type aBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// decodeAnthropic reads a schema-valid Messages request and checks the
// conversation rules: it starts with the user, roles alternate, and the
// user message after an assistant's tool_use blocks answers every one of
// them with a tool_result, results first, and nothing else.
func decodeAnthropic(body []byte) (Turn, error) {
	var req struct {
		Model     string          `json:"model"`
		MaxTokens int             `json:"max_tokens"`
		System    json.RawMessage `json:"system"`
		Messages  []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"input_schema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return Turn{}, err
	}
	turn := Turn{Model: req.Model, MaxTokens: req.MaxTokens, System: anthropicText(req.System)}
	for _, t := range req.Tools {
		turn.Tools = append(turn.Tools, llm.Tool{Name: t.Name, Description: t.Description, Schema: t.InputSchema})
	}
	var pending map[string]bool // tool_use ids the next user message must answer
	for i, m := range req.Messages {
		if want := []string{"user", "assistant"}[i%2]; m.Role != want {
			return Turn{}, fmt.Errorf("messages[%d].role = %q, want %q (the conversation starts with the user and alternates)", i, m.Role, want)
		}
		var blocks []aBlock
		if json.Unmarshal(m.Content, &blocks) != nil {
			var s string
			json.Unmarshal(m.Content, &s)
			blocks = []aBlock{{Type: "text", Text: s}}
		}
		msg := llm.Message{Role: llm.Role(m.Role)}
		sawOther := false
		for j, b := range blocks {
			switch b.Type {
			case "text":
				msg.Text += b.Text
				sawOther = true
			case "tool_use":
				if m.Role != "assistant" {
					return Turn{}, fmt.Errorf("messages[%d].content[%d]: tool_use in a %s message", i, j, m.Role)
				}
				msg.ToolCalls = append(msg.ToolCalls, llm.ToolCall{ID: b.ID, Name: b.Name, Input: b.Input})
			case "tool_result":
				if m.Role != "user" || sawOther {
					return Turn{}, fmt.Errorf("messages[%d].content[%d]: tool_result must come first in a user message", i, j)
				}
				if !pending[b.ToolUseID] {
					return Turn{}, fmt.Errorf("messages[%d].content[%d]: tool_result for %q, which the previous assistant message did not call (or was answered twice)", i, j, b.ToolUseID)
				}
				delete(pending, b.ToolUseID)
				msg.ToolResults = append(msg.ToolResults, llm.ToolResult{CallID: b.ToolUseID, Content: anthropicText(b.Content), IsError: b.IsError})
			}
		}
		if m.Role == "user" {
			if len(pending) > 0 {
				return Turn{}, fmt.Errorf("messages[%d]: tool_use ids %v have no tool_result", i, keys(pending))
			}
			pending = nil
		} else {
			pending = map[string]bool{}
			for _, c := range msg.ToolCalls {
				pending[c.ID] = true
			}
		}
		turn.Messages = append(turn.Messages, msg)
	}
	if len(req.Messages)%2 == 0 {
		return Turn{}, fmt.Errorf("the last message is the assistant's; helix-org never prefills")
	}
	return turn, nil
}

// anthropicText flattens a string or an array of text blocks.
func anthropicText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []aBlock
	json.Unmarshal(raw, &blocks)
	var parts []string
	for _, b := range blocks {
		parts = append(parts, b.Text)
	}
	return strings.Join(parts, "\n")
}

func anthropicReply(model string, r Reply) map[string]any {
	content := []map[string]any{}
	if r.Text != "" {
		content = append(content, map[string]any{"type": "text", "text": r.Text})
	}
	stop := "end_turn"
	for _, c := range r.ToolCalls {
		content = append(content, map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": c.Input})
		stop = "tool_use"
	}
	return map[string]any{"id": "msg_llmtest", "type": "message", "role": "assistant", "model": model, "content": content,
		"stop_reason": stop, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": r.Usage.InputTokens, "output_tokens": r.Usage.OutputTokens}}
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
