package llmtest

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/helixml/helix-org/agent/llm"
)

// decodeOpenAI reads a schema-valid Chat Completions request and checks
// the conversation rules: a system message only first, an assistant
// message has content unless it calls tools, and its tool_calls are each
// answered by exactly one role "tool" message right
// after it, and no tool message answers anything else.
func decodeOpenAI(body []byte) (Turn, error) {
	var req struct {
		Model               string `json:"model"`
		MaxCompletionTokens int    `json:"max_completion_tokens"`
		MaxTokens           int    `json:"max_tokens"`
		Messages            []struct {
			Role      string          `json:"role"`
			Content   json.RawMessage `json:"content"`
			ToolCalls []struct {
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
			ToolCallID string `json:"tool_call_id"`
		} `json:"messages"`
		Tools []struct {
			Function struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				Parameters  json.RawMessage `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return Turn{}, err
	}
	turn := Turn{Model: req.Model, MaxTokens: max(req.MaxCompletionTokens, req.MaxTokens)}
	for _, t := range req.Tools {
		turn.Tools = append(turn.Tools, llm.Tool{Name: t.Function.Name, Description: t.Function.Description, Schema: t.Function.Parameters})
	}
	pending := map[string]bool{}
	for i, m := range req.Messages {
		if m.Role != "tool" && len(pending) > 0 {
			return Turn{}, fmt.Errorf("messages[%d] (%s): tool calls %v were not answered by tool messages first", i, m.Role, keys(pending))
		}
		text := openaiText(m.Content)
		switch m.Role {
		case "system":
			if i != 0 {
				return Turn{}, fmt.Errorf("messages[%d]: a system message after the start", i)
			}
			turn.System = text
		case "user":
			turn.Messages = append(turn.Messages, llm.Message{Role: llm.RoleUser, Text: text})
		case "assistant":
			if len(m.ToolCalls) == 0 && string(m.Content) == "null" {
				return Turn{}, fmt.Errorf("messages[%d]: an assistant message with neither content nor tool_calls", i)
			}
			msg := llm.Message{Role: llm.RoleAssistant, Text: text}
			for _, c := range m.ToolCalls {
				pending[c.ID] = true
				// Arguments are what the model wrote, valid JSON or not.
				msg.ToolCalls = append(msg.ToolCalls, llm.ToolCall{ID: c.ID, Name: c.Function.Name, Input: arguments(c.Function.Arguments)})
			}
			turn.Messages = append(turn.Messages, msg)
		case "tool":
			if !pending[m.ToolCallID] {
				return Turn{}, fmt.Errorf("messages[%d]: tool message for %q, which no preceding assistant message is waiting on", i, m.ToolCallID)
			}
			delete(pending, m.ToolCallID)
			last := &turn.Messages[len(turn.Messages)-1]
			if last.Role != llm.RoleUser || len(last.ToolResults) == 0 {
				turn.Messages = append(turn.Messages, llm.Message{Role: llm.RoleUser})
				last = &turn.Messages[len(turn.Messages)-1]
			}
			last.ToolResults = append(last.ToolResults, llm.ToolResult{CallID: m.ToolCallID, Content: text})
		}
	}
	if len(pending) > 0 {
		return Turn{}, fmt.Errorf("tool calls %v were never answered", keys(pending))
	}
	if len(turn.Messages) == 0 || turn.Messages[len(turn.Messages)-1].Role != llm.RoleUser {
		return Turn{}, fmt.Errorf("the conversation must end with the user or tool results")
	}
	return turn, nil
}

func openaiText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	json.Unmarshal(raw, &parts)
	var out []string
	for _, p := range parts {
		out = append(out, p.Text)
	}
	return strings.Join(out, "\n")
}

func openaiReply(model string, r Reply) map[string]any {
	msg := map[string]any{"role": "assistant", "content": nil}
	if r.Text != "" {
		msg["content"] = r.Text
	}
	finish := "stop"
	if len(r.ToolCalls) > 0 {
		var calls []map[string]any
		for _, c := range r.ToolCalls {
			calls = append(calls, map[string]any{"id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": string(c.Input)}})
		}
		msg["tool_calls"] = calls
		finish = "tool_calls"
	}
	return map[string]any{"id": "chatcmpl-llmtest", "object": "chat.completion", "created": time.Now().Unix(), "model": model,
		"choices": []map[string]any{{"index": 0, "message": msg, "finish_reason": finish}},
		"usage":   map[string]any{"prompt_tokens": r.Usage.InputTokens, "completion_tokens": r.Usage.OutputTokens, "total_tokens": r.Usage.InputTokens + r.Usage.OutputTokens}}
}

// arguments keeps valid JSON as is and anything else as a JSON string.
func arguments(s string) json.RawMessage {
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	b, _ := json.Marshal(s)
	return b
}
