package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/agent/llm"
)

// ReadResourceToolName is the tool the built-in agent gains once a tool
// result arrives as a resource link (a result too large to send inline).
const ReadResourceToolName = "read_resource"

// readChunk is how much of a resource one read_resource call returns by
// default: the server's inline limit.
const readChunk = 16 << 10

func readResourceSpec() llm.Tool {
	return llm.Tool{Name: ReadResourceToolName,
		Description: "Read a resource a tool result linked to, a part at a time.",
		Schema:      json.RawMessage(`{"type":"object","properties":{"uri":{"type":"string"},"offset":{"type":"integer"},"limit":{"type":"integer"}},"required":["uri"]}`)}
}

// noteLinks offers read_resource from the next turn on when res links to
// a resource; until then the model is offered exactly the worker's tools.
func (t *Toolbox) noteLinks(res *mcp.CallToolResult) {
	if t.linked {
		return
	}
	for _, c := range res.Content {
		if _, ok := c.(*mcp.ResourceLink); ok {
			t.linked = true
			t.specs = append(t.specs, readResourceSpec())
			return
		}
	}
}

// readResource answers read_resource: the bytes [offset, offset+limit) of
// the resource's text, with what remains said, so the model can page.
func (t *Toolbox) readResource(ctx context.Context, args map[string]any) (string, bool) {
	uri, _ := args["uri"].(string)
	offset, limit := intArg(args, "offset", 0), intArg(args, "limit", readChunk)
	if uri == "" || offset < 0 || limit <= 0 {
		return `read_resource needs a "uri" string, and a non-negative "offset" and positive "limit" when given`, true
	}
	res, err := t.session.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		return fmt.Sprintf("read %s: %v", uri, err), true
	}
	var text strings.Builder
	for _, c := range res.Contents {
		text.WriteString(c.Text)
	}
	all := text.String()
	if offset >= len(all) {
		return fmt.Sprintf("%s is %d bytes; offset %d is past its end", uri, len(all), offset), true
	}
	end := min(offset+limit, len(all))
	for end < len(all) && !utf8.RuneStart(all[end]) {
		end-- // never split a character
	}
	part := all[offset:end]
	if end < len(all) {
		part += fmt.Sprintf("\n… (bytes %d-%d of %d; read on with offset %d)", offset, end, len(all), end)
	}
	return part, false
}

func intArg(args map[string]any, name string, def int) int {
	if v, ok := args[name].(float64); ok {
		return int(v)
	}
	return def
}
