// Package llm speaks the tool-calling chat APIs of LLM providers — the
// Anthropic Messages API and the OpenAI Chat Completions API, and every
// server compatible with either (Ollama, vLLM, llama.cpp's server) —
// behind one small interface. It knows nothing of helix-org: no MCP, no
// store, no config keys.
package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Provider names, as agent.provider spells them.
const (
	Anthropic = "anthropic"
	OpenAI    = "openai"
)

// Role is who spoke a message.
type Role string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// Message is one turn of a conversation in a provider-neutral form. A user
// message carries text or the results of the previous turn's tool calls;
// an assistant message carries text and/or tool calls. It is also the form
// a chat's history is saved in.
type Message struct {
	Role        Role         `json:"role"`
	Text        string       `json:"text,omitempty"`
	ToolCalls   []ToolCall   `json:"toolCalls,omitempty"`
	ToolResults []ToolResult `json:"toolResults,omitempty"`
}

// ToolCall is the model asking to run a tool. Input is the arguments as
// the model wrote them; it may not be valid JSON when a model errs.
type ToolCall struct {
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// ToolResult answers the tool call with the same ID.
type ToolResult struct {
	CallID  string `json:"callId"`
	Content string `json:"content"`
	IsError bool   `json:"isError,omitempty"`
}

// Tool is a tool offered to the model; Schema is its input's JSON Schema.
type Tool struct {
	Name        string
	Description string
	Schema      json.RawMessage
}

// Request is one model call.
type Request struct {
	System    string
	Messages  []Message
	Tools     []Tool
	MaxTokens int
}

// Usage is what one call cost, in tokens.
type Usage struct {
	InputTokens  int64
	OutputTokens int64
}

// Response is the model's reply: always an assistant message.
type Response struct {
	Message    Message
	Usage      Usage
	StopReason string
}

// Provider is one LLM API.
type Provider interface {
	Complete(ctx context.Context, req Request) (Response, error)
}

// Config chooses and configures a provider.
type Config struct {
	// Provider is Anthropic or OpenAI (the wire format).
	Provider string
	Model    string
	// BaseURL defaults to the provider's public API. For Anthropic it is
	// the host (https://api.anthropic.com), and /v1/messages is appended;
	// for OpenAI it includes the version path (https://api.openai.com/v1,
	// http://localhost:11434/v1), and /chat/completions is appended.
	BaseURL string
	// APIKey may be empty only with a BaseURL, for keyless local servers.
	APIKey     string
	HTTPClient *http.Client
	Retry      Retry
}

// AttemptTimeout bounds one HTTP attempt when Config.HTTPClient is nil:
// long enough for a slow local model to write a long reply.
const AttemptTimeout = 5 * time.Minute

// Default base URLs.
const (
	AnthropicBaseURL = "https://api.anthropic.com"
	OpenAIBaseURL    = "https://api.openai.com/v1"
)

// New returns the provider cfg names.
func New(cfg Config) (Provider, error) {
	if cfg.Model == "" {
		return nil, errors.New("no model given")
	}
	if cfg.APIKey == "" && cfg.BaseURL == "" {
		return nil, errors.New("no API key given (a key may be omitted only with a base URL, for a keyless local server)")
	}
	if cfg.HTTPClient == nil {
		// Bounds one attempt, so a provider that never answers is retried
		// and then reported instead of holding the run until it is killed.
		cfg.HTTPClient = &http.Client{Timeout: AttemptTimeout}
	}
	base := strings.TrimRight(cfg.BaseURL, "/")
	switch cfg.Provider {
	case Anthropic, "":
		if base == "" {
			base = AnthropicBaseURL
		}
		return &anthropic{cfg: cfg, url: strings.TrimSuffix(base, "/v1") + "/v1/messages"}, nil
	case OpenAI:
		if base == "" {
			base = OpenAIBaseURL
		}
		return &openai{cfg: cfg, url: base + "/chat/completions"}, nil
	}
	return nil, fmt.Errorf("unknown provider %q (valid: %s, %s)", cfg.Provider, Anthropic, OpenAI)
}

// malformed is the error for a reply that does not follow the wire format.
func malformed(provider, format string, args ...any) error {
	return fmt.Errorf("%s returned a malformed response: %s", provider, fmt.Sprintf(format, args...))
}

// objectOrEmpty is raw when it is a JSON object, else {}: tool inputs must
// be objects on the wire even when a model wrote nothing.
func objectOrEmpty(raw json.RawMessage) json.RawMessage {
	var m map[string]any
	if json.Unmarshal(raw, &m) == nil && m != nil {
		return raw
	}
	return json.RawMessage("{}")
}
