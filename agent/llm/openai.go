package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
)

// openai speaks Chat Completions: POST {base}/chat/completions, tools as
// {type: function, function: {name, description, parameters}}, tool calls
// in message.tool_calls with arguments as a JSON string, and each answer
// as a role "tool" message naming its tool_call_id.
type openai struct {
	cfg Config
	url string
}

type openaiRequest struct {
	Model    string          `json:"model"`
	Messages []openaiMessage `json:"messages"`
	Tools    []openaiTool    `json:"tools,omitempty"`
	// max_completion_tokens is the documented field (max_tokens is
	// deprecated and refused by newer OpenAI models); servers that do not
	// know it ignore it, and it is only a cap.
	MaxCompletionTokens int `json:"max_completion_tokens,omitempty"`
}

type openaiMessage struct {
	Role string `json:"role"`
	// Content is null on an assistant message that only calls tools.
	Content    *string          `json:"content"`
	ToolCalls  []openaiToolCall `json:"tool_calls,omitempty"`
	ToolCallID string           `json:"tool_call_id,omitempty"`
}

type openaiToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

type openaiTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

type openaiResponse struct {
	Choices []struct {
		Message *struct {
			Role      string           `json:"role"`
			Content   *string          `json:"content"`
			ToolCalls []openaiToolCall `json:"tool_calls"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int64 `json:"prompt_tokens"`
		CompletionTokens int64 `json:"completion_tokens"`
	} `json:"usage"`
	Error json.RawMessage `json:"error"`
}

func (o *openai) Complete(ctx context.Context, req Request) (Response, error) {
	body, err := json.Marshal(o.encode(req))
	if err != nil {
		return Response{}, err
	}
	h := http.Header{}
	if o.cfg.APIKey != "" {
		h.Set("Authorization", "Bearer "+o.cfg.APIKey)
	}
	reply, err := postJSON(ctx, o.cfg.HTTPClient, OpenAI, o.url, h, body, o.cfg.Retry)
	if err != nil {
		return Response{}, err
	}
	return decodeOpenAI(reply)
}

func ptr(s string) *string { return &s }

func (o *openai) encode(req Request) openaiRequest {
	out := openaiRequest{Model: o.cfg.Model, MaxCompletionTokens: req.MaxTokens}
	if req.System != "" {
		out.Messages = append(out.Messages, openaiMessage{Role: "system", Content: ptr(req.System)})
	}
	for _, t := range req.Tools {
		var tool openaiTool
		tool.Type = "function"
		tool.Function.Name, tool.Function.Description, tool.Function.Parameters = t.Name, t.Description, t.Schema
		out.Tools = append(out.Tools, tool)
	}
	for _, m := range req.Messages {
		if m.Role == RoleAssistant {
			am := openaiMessage{Role: "assistant"}
			if m.Text != "" || len(m.ToolCalls) == 0 {
				am.Content = ptr(m.Text)
			}
			for _, c := range m.ToolCalls {
				tc := openaiToolCall{ID: c.ID, Type: "function"}
				args, _ := json.Marshal(argumentString(c.Input)) // arguments travel as a JSON string
				tc.Function.Name, tc.Function.Arguments = c.Name, args
				am.ToolCalls = append(am.ToolCalls, tc)
			}
			out.Messages = append(out.Messages, am)
			continue
		}
		for _, r := range m.ToolResults {
			content := r.Content
			if r.IsError {
				// Chat Completions has no error flag on a tool message.
				content = "Error: " + content
			}
			out.Messages = append(out.Messages, openaiMessage{Role: "tool", ToolCallID: r.CallID, Content: ptr(content)})
		}
		if m.Text != "" || len(m.ToolResults) == 0 {
			out.Messages = append(out.Messages, openaiMessage{Role: "user", Content: ptr(m.Text)})
		}
	}
	return out
}

func decodeOpenAI(reply []byte) (Response, error) {
	var r openaiResponse
	if err := json.Unmarshal(reply, &r); err != nil {
		return Response{}, malformed(OpenAI, "not a Chat Completions reply: %v", err)
	}
	if len(r.Choices) == 0 {
		if r.Error != nil {
			return Response{}, fmt.Errorf("%s: error in reply: %s", OpenAI, errorMessage(reply))
		}
		return Response{}, malformed(OpenAI, "no choices: %s", excerpt(reply))
	}
	c := r.Choices[0]
	if c.Message == nil {
		return Response{}, malformed(OpenAI, "choices[0] has no message: %s", excerpt(reply))
	}
	msg := Message{Role: RoleAssistant}
	if c.Message.Content != nil {
		msg.Text = *c.Message.Content
	}
	for i, tc := range c.Message.ToolCalls {
		if tc.Function.Name == "" {
			return Response{}, malformed(OpenAI, "tool call %d has no function name: %s", i, excerpt(reply))
		}
		id := tc.ID
		if id == "" {
			// Some compatible servers omit ids; results still need one to pair with.
			id = fmt.Sprintf("call_%d", i)
		}
		msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: id, Name: tc.Function.Name, Input: arguments(tc.Function.Arguments)})
	}
	res := Response{Message: msg, StopReason: c.FinishReason}
	if r.Usage != nil {
		res.Usage = Usage{InputTokens: r.Usage.PromptTokens, OutputTokens: r.Usage.CompletionTokens}
	}
	return res, nil
}

// arguments unwraps function.arguments, documented as a JSON string; some
// servers send the object itself. Arguments that are not valid JSON are
// kept as a JSON string of what the model wrote, so the call can fail
// back to the model and the history still round-trips.
func arguments(raw json.RawMessage) json.RawMessage {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if s == "" {
			return json.RawMessage("{}")
		}
		if !json.Valid([]byte(s)) {
			return raw
		}
		return json.RawMessage(s)
	}
	if len(raw) == 0 || string(raw) == "null" {
		return json.RawMessage("{}")
	}
	return raw
}

// argumentString is the inverse of arguments.
func argumentString(input json.RawMessage) string {
	var s string
	if json.Unmarshal(input, &s) == nil {
		return s
	}
	return string(input)
}
