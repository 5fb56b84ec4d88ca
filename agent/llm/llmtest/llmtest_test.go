package llmtest_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/agent/llm"
	"github.com/helixml/helix-org/agent/llm/llmtest"
)

// recorder is a testing.TB whose Errorf is recorded, so a test can see
// the fake fail a request without failing itself.
type recorder struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
	r.mu.Unlock()
}

const tools = `"tools":[{"name":"publish","input_schema":{"type":"object","properties":{"body":{"type":"string"}}}}]`

// TestFakeRejectsWhatTheAPIsWould: the fake is only useful if it fails
// the requests a real provider would refuse.
func TestFakeRejectsWhatTheAPIsWould(t *testing.T) {
	anthropicOK := `{"model":"m","max_tokens":10,` + tools + `,"messages":[{"role":"user","content":"hi"},` +
		`{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"publish","input":{"body":"x"}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}]}`
	openaiOK := `{"model":"m","messages":[{"role":"system","content":"s"},{"role":"user","content":"hi"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"publish","arguments":"{}"}}]},` +
		`{"role":"tool","tool_call_id":"c1","content":"ok"}],"tools":[{"type":"function","function":{"name":"publish","parameters":{"type":"object"}}}]}`
	tests := []struct {
		format, name, body string
		noAuth             bool
		want               string // empty: accepted
	}{
		{llm.Anthropic, "valid", anthropicOK, false, ""},
		{llm.Anthropic, "no key", anthropicOK, true, "x-api-key"},
		{llm.Anthropic, "no max_tokens", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, false, "max_tokens"},
		{llm.Anthropic, "starts with the assistant", `{"model":"m","max_tokens":1,"messages":[{"role":"assistant","content":"hi"}]}`, false, "starts with the user"},
		{llm.Anthropic, "empty text block", `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"text","text":""}]}]}`, false, "schema"},
		{llm.Anthropic, "tool name with a space", `{"model":"m","max_tokens":1,"tools":[{"name":"my tool","input_schema":{"type":"object"}}],"messages":[{"role":"user","content":"hi"}]}`, false, "schema"},
		{llm.Anthropic, "schema not an object", `{"model":"m","max_tokens":1,"tools":[{"name":"t","input_schema":{"type":"string"}}],"messages":[{"role":"user","content":"hi"}]}`, false, "schema"},
		{llm.Anthropic, "result for no call", `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t9","content":"x"}]}]}`, false, "did not call"},
		{llm.Anthropic, "call left unanswered", strings.Replace(anthropicOK, `{"type":"tool_result","tool_use_id":"t1","content":"ok"}`, `{"type":"text","text":"next"}`, 1), false, "have no tool_result"},
		{llm.Anthropic, "text before the result", strings.Replace(anthropicOK, `[{"type":"tool_result"`, `[{"type":"text","text":"x"},{"type":"tool_result"`, 1), false, "must come first"},
		{llm.OpenAI, "valid", openaiOK, false, ""},
		{llm.OpenAI, "no key", openaiOK, true, "Authorization"},
		{llm.OpenAI, "arguments as an object", strings.Replace(openaiOK, `"arguments":"{}"`, `"arguments":{}`, 1), false, "schema"},
		{llm.OpenAI, "tool message for no call", strings.Replace(openaiOK, `"tool_call_id":"c1"`, `"tool_call_id":"c9"`, 1), false, "no preceding assistant message"},
		{llm.OpenAI, "call left unanswered", strings.Replace(openaiOK, `{"role":"tool","tool_call_id":"c1","content":"ok"}`, `{"role":"user","content":"next"}`, 1), false, "not answered"},
		{llm.OpenAI, "assistant says nothing", `{"model":"m","messages":[{"role":"user","content":"a"},{"role":"assistant","content":null},{"role":"user","content":"b"}]}`, false, "neither content nor tool_calls"},
		{llm.OpenAI, "late system message", `{"model":"m","messages":[{"role":"user","content":"a"},{"role":"system","content":"s"}]}`, false, "system message after the start"},
	}
	for _, tt := range tests {
		t.Run(tt.format+"/"+tt.name, func(t *testing.T) {
			rec := &recorder{TB: t}
			fake := llmtest.New(rec, tt.format, func(llmtest.Turn) llmtest.Reply { return llmtest.Reply{Text: "ok"} })
			path := "/v1/messages"
			if tt.format == llm.OpenAI {
				path = "/chat/completions"
			}
			req, _ := http.NewRequest("POST", fake.BaseURL()+path, strings.NewReader(tt.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("anthropic-version", llm.AnthropicVersion)
			if !tt.noAuth {
				req.Header.Set("x-api-key", llmtest.APIKey)
				req.Header.Set("Authorization", "Bearer "+llmtest.APIKey)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			errs := strings.Join(rec.errs, "\n")
			if tt.want == "" {
				if resp.StatusCode != 200 || errs != "" {
					t.Errorf("a valid request got %d: %s", resp.StatusCode, errs)
				}
				return
			}
			if resp.StatusCode != 400 || !strings.Contains(errs, tt.want) {
				t.Errorf("status %d, errors %q; want 400 and %q", resp.StatusCode, errs, tt.want)
			}
		})
	}
}

// TestTriggers reads a prompt as dispatch renders it (its golden file).
func TestTriggers(t *testing.T) {
	prompt, err := os.ReadFile(filepath.Join("..", "..", "..", "dispatch", "testdata", "prompt.golden.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want := []llmtest.Trigger{
		{Event: "e-mail", Stream: "s-support", Body: "Where is my invoice?\nThanks, Ada", From: "ada@example.com",
			Subject: "Invoice", ThreadID: "<m1@x>", To: "h+sam@inbound.postmarkapp.com"},
		{Event: "e-reply", Stream: "s-support", Body: "I'll take this one", Source: "w-maya", From: "w-maya"},
	}
	if diff := cmp.Diff(want, llmtest.Triggers(string(prompt))); diff != "" {
		t.Errorf("triggers (-want +got):\n%s", diff)
	}
}
