package dispatch

import (
	"testing"

	"github.com/helixml/helix-org/domain"
)

func TestRedactDM(t *testing.T) {
	const w = "w-echo"
	tests := []struct {
		name string
		in   domain.LogEntry
		want string
	}{
		{"ordinary tool result untouched",
			domain.LogEntry{Kind: domain.LogToolResult, Text: `{"events":[{"seq":3,"streamId":"s-inbox","message":{"body":"hi"}}],"cursor":3}`},
			`{"events":[{"seq":3,"streamId":"s-inbox","message":{"body":"hi"}}],"cursor":3}`},
		{"dm call by the built-in agent's name",
			domain.LogEntry{Kind: domain.LogToolCall, Tool: "dm", Text: `{"to":"w-owner","body":"secret"}`},
			"dm to w-owner: message withheld from this log; its two members read it on s-dm-w-echo-w-owner"},
		{"dm call whose arguments are not JSON",
			domain.LogEntry{Kind: domain.LogToolCall, Tool: "mcp__helix-org__dm", Text: `to=w-owner secret`},
			"dm: message withheld from this log; its two members read it on their DM stream"},
		{"publish to a DM stream",
			domain.LogEntry{Kind: domain.LogToolCall, Tool: "publish", Text: `{"stream":"s-dm-w-echo-w-owner","body":"secret"}`},
			"publish to s-dm-w-echo-w-owner: message withheld from this log; its two members read it there"},
		{"reading a DM names it only",
			domain.LogEntry{Kind: domain.LogToolCall, Tool: "read_events", Text: `{"streams":["s-dm-w-echo-w-owner"]}`},
			`{"streams":["s-dm-w-echo-w-owner"]}`},
		{"the dm tool's own result",
			domain.LogEntry{Kind: domain.LogToolResult, Text: `{"stream":"s-dm-w-echo-w-owner","event":{"seq":41,"streamId":"s-dm-w-echo-w-owner","message":{"body":"secret"}}}`},
			"tool result held 1 message(s) from s-dm-w-echo-w-owner (seq 41); read them there\n" +
				`{"event":"(direct message 41 on s-dm-w-echo-w-owner: withheld)","stream":"s-dm-w-echo-w-owner"}`},
		{"two DM streams",
			domain.LogEntry{Kind: domain.LogToolResult, Text: `[{"seq":5,"streamId":"s-dm-w-b-w-echo","message":{}},{"seq":2,"streamId":"s-dm-w-a-w-echo","message":{}},{"seq":9,"streamId":"s-dm-w-b-w-echo","message":{}}]`},
			"tool result held 1 message(s) from s-dm-w-a-w-echo (seq 2); 2 message(s) from s-dm-w-b-w-echo (seq 5–9); read them there\n" +
				`["(direct message 5 on s-dm-w-b-w-echo: withheld)","(direct message 2 on s-dm-w-a-w-echo: withheld)","(direct message 9 on s-dm-w-b-w-echo: withheld)"]`},
		{"a tool result that is not JSON is withheld",
			domain.LogEntry{Kind: domain.LogToolResult, Text: `s-dm-w-echo-w-owner #41 from w-owner: secret`},
			"tool result withheld from this log: it is not JSON and mentions s-dm-w-echo-w-owner; the members read the DM there"},
		{"our tool errors name a DM and stay",
			domain.LogEntry{Kind: domain.LogToolResult, Text: `error: s-dm-w-a-w-b is a direct-message stream; only its two members read it`},
			`error: s-dm-w-a-w-b is a direct-message stream; only its two members read it`},
		{"assistant text may name a DM",
			domain.LogEntry{Kind: domain.LogAssistant, Text: `I answered on s-dm-w-echo-w-owner.`},
			`I answered on s-dm-w-echo-w-owner.`},
		{"output lines holding DM events are sifted too",
			domain.LogEntry{Kind: domain.LogOutput, Text: `{"seq":7,"streamId":"s-dm-w-echo-w-owner","message":{"body":"secret"}}`},
			"output held 1 message(s) from s-dm-w-echo-w-owner (seq 7); read them there\n" + `"(direct message 7 on s-dm-w-echo-w-owner: withheld)"`},
	}
	for _, tt := range tests {
		if got := redactDM(w, tt.in).Text; got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.want)
		}
	}
}
