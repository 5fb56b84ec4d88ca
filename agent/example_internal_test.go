package agent

import (
	"testing"

	"github.com/helixml/helix-org/agent/llm"
)

// TestExampleModelEndsAsItsAnswersDid: the example agent's run ends in
// error when an answer was not sent, with the server's reason, so the run
// shows as failed; it says "Answered." only when every answer went out.
func TestExampleModelEndsAsItsAnswersDid(t *testing.T) {
	prompt := llm.Message{Role: llm.RoleUser, Text: "woken"}
	asked := llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "example-1", Name: "publish"}, {ID: "example-2", Name: "publish"}}}
	tests := []struct {
		name    string
		results []llm.ToolResult
		want    string
		wantErr string
	}{
		{"every answer sent", []llm.ToolResult{{CallID: "example-1", Content: "{}"}, {CallID: "example-2", Content: "{}"}}, "Answered.", ""},
		{"one refused", []llm.ToolResult{{CallID: "example-1", Content: "{}"}, {CallID: "example-2", Content: "stream: s-old is archived", IsError: true}},
			"", "could not answer: stream: s-old is archived"},
		{"both refused", []llm.ToolResult{{CallID: "example-1", Content: "budget spent", IsError: true}, {CallID: "example-2", Content: "stream: s-old is archived", IsError: true}},
			"", "could not answer: budget spent; stream: s-old is archived"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msgs := []llm.Message{prompt, asked, {Role: llm.RoleUser, ToolResults: tt.results}}
			res, err := exampleModel{self: "w-echo"}.Complete(t.Context(), llm.Request{Messages: msgs})
			switch {
			case tt.wantErr != "" && (err == nil || err.Error() != tt.wantErr):
				t.Errorf("err = %v, want %q", err, tt.wantErr)
			case tt.wantErr == "" && (err != nil || res.Message.Text != tt.want):
				t.Errorf("answer = %q, %v; want %q", res.Message.Text, err, tt.want)
			}
		})
	}
}
