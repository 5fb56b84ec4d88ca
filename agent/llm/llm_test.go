package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/agent/llm"
	"github.com/helixml/helix-org/agent/llm/llmtest"
)

var formats = []string{llm.Anthropic, llm.OpenAI}

func provider(t *testing.T, fake *llmtest.Server, format string, retry llm.Retry) llm.Provider {
	t.Helper()
	p, err := llm.New(llm.Config{Provider: format, Model: "fake-model", BaseURL: fake.BaseURL(), APIKey: llmtest.APIKey, Retry: retry})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

var publishSchema = json.RawMessage(`{"type":"object","properties":{"stream":{"type":"string","description":"stream id"},"body":{"type":"string"}},"required":["stream","body"],"additionalProperties":false}`)

// conversation is a run mid-way: a prompt, a turn that called two tools,
// and their results, one of them an error.
var conversation = llm.Request{
	System:    "You are w-echo.",
	MaxTokens: 321,
	Tools: []llm.Tool{
		{Name: "publish", Description: "Publish a message.", Schema: publishSchema},
		{Name: "list_streams", Description: "List streams.", Schema: json.RawMessage(`{"type":"object","properties":{}}`)},
	},
	Messages: []llm.Message{
		{Role: llm.RoleUser, Text: "event e-1 on s-inbox: hello"},
		{Role: llm.RoleAssistant, Text: "Looking.", ToolCalls: []llm.ToolCall{
			{ID: "c1", Name: "list_streams", Input: json.RawMessage(`{}`)},
			{ID: "c2", Name: "publish", Input: json.RawMessage(`{"stream":"s-nope","body":"x"}`)},
		}},
		{Role: llm.RoleUser, ToolResults: []llm.ToolResult{
			{CallID: "c1", Content: `{"streams":["s-inbox"]}`},
			{CallID: "c2", Content: `stream "s-nope": not found`, IsError: true},
		}},
	},
}

// normalJSON compares raw JSON by value, not by spelling.
var normalJSON = cmp.Transformer("json", func(r json.RawMessage) any {
	var v any
	json.Unmarshal(r, &v)
	return v
})

func TestCompleteSpeaksEachWireFormat(t *testing.T) {
	for _, format := range formats {
		t.Run(format, func(t *testing.T) {
			fake := llmtest.New(t, format, func(llmtest.Turn) llmtest.Reply {
				return llmtest.Reply{Text: "Fixing it.", ToolCalls: []llm.ToolCall{llmtest.Call("publish", map[string]string{"stream": "s-inbox", "body": "echo: hello"})},
					Usage: llm.Usage{InputTokens: 120, OutputTokens: 30}}
			})
			res, err := provider(t, fake, format, llm.Retry{}).Complete(t.Context(), conversation)
			if err != nil {
				t.Fatal(err)
			}
			want := llm.Message{Role: llm.RoleAssistant, Text: "Fixing it.", ToolCalls: []llm.ToolCall{
				{ID: "call_1_0", Name: "publish", Input: json.RawMessage(`{"stream":"s-inbox","body":"echo: hello"}`)}}}
			if diff := cmp.Diff(want, res.Message, normalJSON); diff != "" {
				t.Errorf("reply (-want +got):\n%s", diff)
			}
			if res.Usage != (llm.Usage{InputTokens: 120, OutputTokens: 30}) {
				t.Errorf("usage = %+v", res.Usage)
			}

			// What went over the wire decodes back to what was sent: tool
			// schemas verbatim, results paired with their calls.
			turns := fake.Turns()
			if len(turns) != 1 {
				t.Fatalf("%d requests, want 1", len(turns))
			}
			got := turns[0]
			wantMsgs := conversation.Messages
			if format == llm.OpenAI {
				// Chat Completions has no error flag: the error is in the text.
				wantMsgs = append([]llm.Message(nil), wantMsgs...)
				wantMsgs[2] = llm.Message{Role: llm.RoleUser, ToolResults: []llm.ToolResult{
					{CallID: "c1", Content: `{"streams":["s-inbox"]}`},
					{CallID: "c2", Content: `Error: stream "s-nope": not found`},
				}}
			}
			if diff := cmp.Diff(wantMsgs, got.Messages, normalJSON); diff != "" {
				t.Errorf("messages on the wire (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(conversation.Tools, got.Tools, normalJSON); diff != "" {
				t.Errorf("tools on the wire (-want +got):\n%s", diff)
			}
			if got.System != conversation.System || got.Model != "fake-model" || got.MaxTokens != 321 {
				t.Errorf("system %q, model %q, max tokens %d", got.System, got.Model, got.MaxTokens)
			}
		})
	}
}

// step is one scripted reply of a retry scenario.
type step struct {
	status     int
	retryAfter string
}

func TestRetries(t *testing.T) {
	past := time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat)
	tests := []struct {
		name     string
		steps    []step // then 200s
		attempts int
		wantErr  []string // empty: the call succeeds
		wantReqs int
	}{
		{name: "429 then success", steps: []step{{429, "0"}}, wantReqs: 2},
		{name: "503 with an HTTP-date Retry-After", steps: []step{{503, past}}, wantReqs: 2},
		{name: "500s back off without Retry-After", steps: []step{{500, ""}, {502, ""}}, wantReqs: 3},
		{name: "a 500 storm gives up", steps: []step{{500, "0"}, {500, "0"}, {500, "0"}, {500, "0"}}, attempts: 3,
			wantErr: []string{"HTTP 500 Internal Server Error", "gave up after 3 attempts"}, wantReqs: 3},
		{name: "400 is not retried", steps: []step{{400, ""}}, wantErr: []string{"HTTP 400", "Bad Request"}, wantReqs: 1},
		{name: "401 names the problem", steps: []step{{401, ""}}, wantErr: []string{"HTTP 401"}, wantReqs: 1},
		{name: "Retry-After too long", steps: []step{{429, "3600"}}, wantErr: []string{"HTTP 429", "retry after 1h0m0s", "giving up"}, wantReqs: 1},
	}
	for _, format := range formats {
		for _, tt := range tests {
			t.Run(format+"/"+tt.name, func(t *testing.T) {
				fake := llmtest.New(t, format, func(turn llmtest.Turn) llmtest.Reply {
					if len(tt.steps) > 0 {
						s := tt.steps[0]
						tt.steps = tt.steps[1:]
						return llmtest.Reply{Status: s.status, RetryAfter: s.retryAfter}
					}
					return llmtest.Reply{Text: "ok"}
				})
				res, err := provider(t, fake, format, llm.Retry{Attempts: tt.attempts, Base: time.Millisecond}).Complete(t.Context(), conversation)
				if len(tt.wantErr) == 0 {
					if err != nil || res.Message.Text != "ok" {
						t.Fatalf("res %+v, err %v", res, err)
					}
				} else {
					if err == nil {
						t.Fatal("want an error")
					}
					for _, w := range tt.wantErr {
						if !strings.Contains(err.Error(), w) {
							t.Errorf("error %q lacks %q", err, w)
						}
					}
				}
				if n := len(fake.Turns()); n != tt.wantReqs {
					t.Errorf("%d requests, want %d", n, tt.wantReqs)
				}
			})
		}
	}
}

func TestRetryAfterIsHonoured(t *testing.T) {
	n := 0
	fake := llmtest.New(t, llm.Anthropic, func(llmtest.Turn) llmtest.Reply {
		n++
		if n == 1 {
			return llmtest.Reply{Status: 429, RetryAfter: "1"}
		}
		return llmtest.Reply{Text: "ok"}
	})
	// Base backoff is tiny, so only Retry-After can explain a 1s gap.
	if _, err := provider(t, fake, llm.Anthropic, llm.Retry{Base: time.Millisecond}).Complete(t.Context(), conversation); err != nil {
		t.Fatal(err)
	}
	turns := fake.Turns()
	if len(turns) != 2 {
		t.Fatalf("%d requests, want 2", len(turns))
	}
	if gap := turns[1].At.Sub(turns[0].At); gap < time.Second {
		t.Errorf("retried after %s; Retry-After asked for 1s", gap)
	}
}

func TestRetryWaitEndsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	fake := llmtest.New(t, llm.OpenAI, func(llmtest.Turn) llmtest.Reply {
		cancel() // the caller gives up while the provider asks it to wait a minute
		return llmtest.Reply{Status: 429, RetryAfter: "60"}
	})
	start := time.Now()
	_, err := provider(t, fake, llm.OpenAI, llm.Retry{}).Complete(ctx, conversation)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Errorf("took %s to notice the cancel", el)
	}
}

func TestRetryAfterParses(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		in     string
		want   time.Duration
		wantOK bool
	}{
		{"", 0, false},
		{"0", 0, true},
		{"7", 7 * time.Second, true},
		{" 3 ", 3 * time.Second, true},
		{"-1", 0, false},
		{"soon", 0, false},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, true},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0, true},
		{"Thursday, 02-Jan-25 03:05:05 GMT", time.Minute, true}, // RFC 850, still valid
	}
	for _, tt := range tests {
		got, ok := llm.RetryAfter(tt.in, now)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("RetryAfter(%q) = %s, %v; want %s, %v", tt.in, got, ok, tt.want, tt.wantOK)
		}
	}
}

func TestMalformedRepliesAreReadableErrors(t *testing.T) {
	tests := []struct {
		format, name, body string
		want               []string
	}{
		{llm.Anthropic, "not JSON", `<html>gateway</html>`, []string{"anthropic returned a malformed response", "not a Messages API reply"}},
		{llm.Anthropic, "no content", `{"type":"message","role":"assistant"}`, []string{"malformed response", `want {"type": "message"`}},
		{llm.Anthropic, "an error object", `{"type":"error","error":{"type":"api_error","message":"boom"}}`, []string{"malformed response", "boom"}},
		{llm.Anthropic, "tool_use without id", `{"type":"message","content":[{"type":"tool_use","name":"publish","input":{}}]}`, []string{"malformed response", "lacks its id or name"}},
		{llm.OpenAI, "not JSON", `data: {"choices"`, []string{"openai returned a malformed response", "not a Chat Completions reply"}},
		{llm.OpenAI, "no choices", `{"choices":[]}`, []string{"malformed response", "no choices"}},
		{llm.OpenAI, "an error object", `{"error":{"message":"model not loaded"}}`, []string{"error in reply", "model not loaded"}},
		{llm.OpenAI, "no message", `{"choices":[{"finish_reason":"stop"}]}`, []string{"malformed response", "has no message"}},
		{llm.OpenAI, "tool call without a name", `{"choices":[{"message":{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"arguments":"{}"}}]}}]}`, []string{"malformed response", "no function name"}},
	}
	for _, tt := range tests {
		t.Run(tt.format+"/"+tt.name, func(t *testing.T) {
			fake := llmtest.New(t, tt.format, func(llmtest.Turn) llmtest.Reply { return llmtest.Reply{Body: tt.body} })
			_, err := provider(t, fake, tt.format, llm.Retry{}).Complete(t.Context(), conversation)
			if err == nil {
				t.Fatal("a malformed reply was accepted")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if n := len(fake.Turns()); n != 1 {
				t.Errorf("%d requests; a malformed reply is not retried", n)
			}
		})
	}
}

// A model that writes broken arguments gets them back verbatim in the
// history, so the loop can tell it what went wrong.
func TestOpenAIKeepsBrokenArguments(t *testing.T) {
	n := 0
	fake := llmtest.New(t, llm.OpenAI, func(turn llmtest.Turn) llmtest.Reply {
		n++
		if n == 1 {
			return llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "publish", Input: json.RawMessage(`{"stream": "s-inbox", "bo`)}}}
		}
		return llmtest.Reply{Text: "ok"}
	})
	p := provider(t, fake, llm.OpenAI, llm.Retry{})
	req := llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: "go"}}}
	res, err := p.Complete(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	var s string
	if err := json.Unmarshal(res.Message.ToolCalls[0].Input, &s); err != nil || s != `{"stream": "s-inbox", "bo` {
		t.Fatalf("broken arguments came back as %s", res.Message.ToolCalls[0].Input)
	}
	req.Messages = append(req.Messages, res.Message, llm.Message{Role: llm.RoleUser, ToolResults: []llm.ToolResult{{CallID: "c1", Content: "bad JSON", IsError: true}}})
	if _, err := p.Complete(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	sent := fake.Turns()[1].Messages[1].ToolCalls[0].Input
	if err := json.Unmarshal(sent, &s); err != nil || s != `{"stream": "s-inbox", "bo` {
		t.Errorf("arguments sent back as %s, want what the model wrote", sent)
	}
}

func TestNewNamesWhatIsMissing(t *testing.T) {
	tests := []struct {
		name string
		cfg  llm.Config
		want string
	}{
		{"no model", llm.Config{Provider: llm.Anthropic, APIKey: "k"}, "no model"},
		{"no key for the public API", llm.Config{Provider: llm.OpenAI, Model: "m"}, "no API key"},
		{"unknown provider", llm.Config{Provider: "gemini", Model: "m", APIKey: "k"}, `unknown provider "gemini"`},
	}
	for _, tt := range tests {
		if _, err := llm.New(tt.cfg); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want %q", tt.name, err, tt.want)
		}
	}
	if _, err := llm.New(llm.Config{Provider: llm.OpenAI, Model: "m", BaseURL: "http://127.0.0.1:11434/v1"}); err != nil {
		t.Errorf("a keyless local server was refused: %v", err)
	}
}
