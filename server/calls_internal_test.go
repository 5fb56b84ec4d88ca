package server

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/tools"
)

// marshalResult copies a built-in tool's structured content into the
// result instead of compacting it again; the bytes must be the go-sdk's.
func TestMarshalResultIsTheSDKs(t *testing.T) {
	outputs := []struct {
		name string
		out  any
	}{
		{"events", map[string]any{"cursor": 3, "events": []map[string]any{{"id": "e-1", "message": map[string]any{"body": `say "hi" <b>&</b>`}}}}},
		{"unicode and separators", map[string]any{"body": "caf\u00e9 \u2028 \u2029 \U0001F600 \\ \t"}},
		{"a member named as the stand-in", map[string]any{"structuredContent": 0, "text": `"structuredContent":0}`}},
		{"empty object", map[string]any{}},
		{"ascii quotes and backslashes", map[string]any{"path": `C:\dir "x" \\ \"`, "del": "\x7f~", "n": 1.5}},
		{"list", []int{1, 2, 3}},
	}
	for _, o := range outputs {
		t.Run(o.name, func(t *testing.T) {
			b, err := json.Marshal(o.out)
			if err != nil {
				t.Fatal(err)
			}
			for _, res := range []*mcp.CallToolResult{
				{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: tools.Marshalled(b)},
				{Meta: mcp.Meta{mcp.MetaKeyServerInfo: tools.Implementation()}, Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: tools.Marshalled(b)},
				{Content: []mcp.Content{&mcp.TextContent{Text: "see the link"}}, StructuredContent: tools.Marshalled(b), IsError: true},
				{Content: []mcp.Content{&mcp.TextContent{Text: "not UTF-8 \xff <&> \u2028 " + string(b)}}, StructuredContent: tools.Marshalled(b)},
				{Content: []mcp.Content{&mcp.TextContent{Text: "one"}, &mcp.TextContent{Text: "two"}}, StructuredContent: tools.Marshalled(b)},
				{Content: []mcp.Content{&mcp.TextContent{Text: "noted", Meta: mcp.Meta{"k": "v"}}}, StructuredContent: tools.Marshalled(b)},
			} {
				want, err := res.MarshalJSON()
				if err != nil {
					t.Fatal(err)
				}
				got, err := marshalResult(res)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("marshalResult:\n got %s\nwant %s", got, want)
				}
				if !bytes.Contains(got, b) {
					t.Errorf("the structured content is not in the answer as marshalled: %s", got)
				}
			}
		})
	}
}
