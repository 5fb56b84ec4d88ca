package server_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/server"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/tools"
)

// TestLargeResultIsLinked: a tool result over tools.InlineLimit reaches
// the client as a resource link (its structured content still there);
// the caller reads it with resources/read, also from a restarted server;
// another worker cannot.
func TestLargeResultIsLinked(t *testing.T) {
	h := servertest.Start(t, server.Config{})
	owner := h.Owner(t)
	seedOrg(t, h, owner)
	big := strings.Repeat("Answer every ticket. ", tools.InlineLimit/20)
	res, err := owner.CallTool(t.Context(), &mcp.CallToolParams{Name: "create_role", Arguments: map[string]any{"id": "r-big", "title": "Big", "content": big}})
	if err != nil || res.IsError {
		t.Fatalf("create_role: %v %s", err, servertest.Text(res))
	}
	if res.StructuredContent == nil {
		t.Error("the linked result lost its structured content")
	}
	if len(res.Content) != 2 {
		t.Fatalf("content = %d blocks, want a note and a link", len(res.Content))
	}
	if note := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(note, "read it with resources/read helix-org://results/res-") {
		t.Errorf("note = %q", note)
	}
	link, ok := res.Content[1].(*mcp.ResourceLink)
	if !ok || link.Size == nil || *link.Size <= tools.InlineLimit || link.MIMEType != "application/json" {
		t.Fatalf("second block = %#v, want a resource link with its size", res.Content[1])
	}

	// Small results stay inline.
	small, err := owner.CallTool(t.Context(), &mcp.CallToolParams{Name: "get_role", Arguments: map[string]any{"id": "r-support"}})
	if err != nil || len(small.Content) != 1 || !strings.Contains(servertest.Text(small), "Answer tickets.") {
		t.Errorf("a small result was not inline: %v %#v", err, small)
	}

	restarted := servertest.StartWith(t, h.Store, server.Config{})
	for name, cs := range map[string]*mcp.ClientSession{"same server": owner, "after a restart": restarted.Owner(t)} {
		t.Run(name, func(t *testing.T) {
			read, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: link.URI})
			if err != nil {
				t.Fatal(err)
			}
			var role struct{ Content string }
			if err := json.Unmarshal([]byte(read.Contents[0].Text), &role); err != nil || role.Content != big {
				t.Errorf("read back %d bytes of content (%v), want the role's %d", len(role.Content), err, len(big))
			}
		})
	}

	servertest.Call[any](t, owner, "grant_tool", map[string]any{"worker": "w-maya", "tool": "list_roles"})
	maya := h.Connect(t, "w-maya", servertest.Token(t, h.Store, "w-maya"))
	if _, err := maya.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: link.URI}); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("another worker read the owner's result: %v", err)
	}
}
