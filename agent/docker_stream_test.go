package agent_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/domain"
)

func TestLogLine(t *testing.T) {
	tests := []struct {
		line string
		want []string
	}{
		{"plain text\r", []string{"output::plain text"}},
		{"", nil},
		{`{"not":"stream-json"}`, []string{`output::{"not":"stream-json"}`}},
		{`{"type":"assistant","message":{"content":[{"type":"text","text":"hi"}]}}`, []string{"assistant::hi"}},
		{`{"type":"result","usage":{"input_tokens":5,"output_tokens":2}}`, nil},
	}
	var res domain.RunResult
	for _, tc := range tests {
		var log logSink
		agent.LogLine(tc.line, log.add, &res)
		if diff := cmp.Diff(tc.want, log.texts()); diff != "" {
			t.Errorf("LogLine(%q) (-want +got):\n%s", tc.line, diff)
		}
	}
	if res.InputTokens != 5 || res.OutputTokens != 2 {
		t.Errorf("usage = %+v", res)
	}
}
