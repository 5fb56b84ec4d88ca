package llm

import (
	"context"
	"encoding/json"
	"net/http"
)

// AnthropicVersion is the anthropic-version header sent with every call.
const AnthropicVersion = "2023-06-01"

// anthropic speaks the Messages API: POST {base}/v1/messages, tools as
// {name, description, input_schema}, tool calls as tool_use blocks and
// their answers as tool_result blocks in the next user message.
type anthropic struct {
	cfg Config
	url string
}

type anthropicRequest struct {
	Model     string             `json:"model"`
	MaxTokens int                `json:"max_tokens"`
	System    string             `json:"system,omitempty"`
	Messages  []anthropicMessage `json:"messages"`
	Tools     []anthropicTool    `json:"tools,omitempty"`
}

type anthropicMessage struct {
	Role    string           `json:"role"`
	Content []anthropicBlock `json:"content"`
}

type anthropicBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
}

type anthropicTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

type anthropicResponse struct {
	Type       string           `json:"type"`
	Role       string           `json:"role"`
	Content    []anthropicBlock `json:"content"`
	StopReason string           `json:"stop_reason"`
	Usage      *struct {
		InputTokens  int64 `json:"input_tokens"`
		OutputTokens int64 `json:"output_tokens"`
	} `json:"usage"`
}

func (a *anthropic) Complete(ctx context.Context, req Request) (Response, error) {
	body, err := json.Marshal(a.encode(req))
	if err != nil {
		return Response{}, err
	}
	h := http.Header{}
	if a.cfg.APIKey != "" {
		h.Set("x-api-key", a.cfg.APIKey)
	}
	h.Set("anthropic-version", AnthropicVersion)
	reply, err := postJSON(ctx, a.cfg.HTTPClient, Anthropic, a.url, h, body, a.cfg.Retry)
	if err != nil {
		return Response{}, err
	}
	return decodeAnthropic(reply)
}

func (a *anthropic) encode(req Request) anthropicRequest {
	out := anthropicRequest{Model: a.cfg.Model, MaxTokens: req.MaxTokens, System: req.System}
	if out.MaxTokens <= 0 {
		out.MaxTokens = 4096 // required by the API
	}
	for _, t := range req.Tools {
		out.Tools = append(out.Tools, anthropicTool{Name: t.Name, Description: t.Description, InputSchema: t.Schema})
	}
	for _, m := range req.Messages {
		var blocks []anthropicBlock
		// tool_result blocks must come first in a user message.
		for _, r := range m.ToolResults {
			content, _ := json.Marshal(r.Content)
			blocks = append(blocks, anthropicBlock{Type: "tool_result", ToolUseID: r.CallID, Content: content, IsError: r.IsError})
		}
		if m.Text != "" {
			blocks = append(blocks, anthropicBlock{Type: "text", Text: m.Text})
		}
		for _, c := range m.ToolCalls {
			blocks = append(blocks, anthropicBlock{Type: "tool_use", ID: c.ID, Name: c.Name, Input: objectOrEmpty(c.Input)})
		}
		if len(blocks) == 0 {
			// An empty turn (a model that said nothing) still needs a block.
			blocks = []anthropicBlock{{Type: "text", Text: "(no content)"}}
		}
		out.Messages = append(out.Messages, anthropicMessage{Role: string(m.Role), Content: blocks})
	}
	return out
}

func decodeAnthropic(reply []byte) (Response, error) {
	var r anthropicResponse
	if err := json.Unmarshal(reply, &r); err != nil {
		return Response{}, malformed(Anthropic, "not a Messages API reply: %v", err)
	}
	if r.Type != "message" || r.Content == nil {
		return Response{}, malformed(Anthropic, `want {"type": "message", "content": [...]}, got %s`, excerpt(reply))
	}
	msg := Message{Role: RoleAssistant}
	for _, b := range r.Content {
		switch b.Type {
		case "text":
			msg.Text += b.Text
		case "tool_use":
			if b.ID == "" || b.Name == "" {
				return Response{}, malformed(Anthropic, "a tool_use block lacks its id or name: %s", excerpt(reply))
			}
			msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: b.ID, Name: b.Name, Input: objectOrEmpty(b.Input)})
		}
	}
	res := Response{Message: msg, StopReason: r.StopReason}
	if r.Usage != nil {
		res.Usage = Usage{InputTokens: r.Usage.InputTokens, OutputTokens: r.Usage.OutputTokens}
	}
	return res, nil
}

// excerpt is the start of a reply, for error messages.
func excerpt(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}
