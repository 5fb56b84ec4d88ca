package agent

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestResultTextAsWritten: what the built-in agent hands its model of a
// tool's result keeps <, > and & as written, whichever content it has.
func TestResultTextAsWritten(t *testing.T) {
	tests := []struct {
		name string
		res  *mcp.CallToolResult
		want string
	}{
		{"text", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `{"body":"<b>R&D</b>"}`}}}, `{"body":"<b>R&D</b>"}`},
		{"a resource link", &mcp.CallToolResult{Content: []mcp.Content{&mcp.ResourceLink{URI: "helix-org://results/r-1", Name: "<big> & long"}}},
			`{"type":"resource_link","uri":"helix-org://results/r-1","name":"<big> & long"}`},
		{"only structured content", &mcp.CallToolResult{StructuredContent: map[string]any{"body": "a<b"}}, `{"body":"a<b"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := resultText(tt.res); got != tt.want {
				t.Errorf("resultText = %s, want %s", got, tt.want)
			}
		})
	}
}
