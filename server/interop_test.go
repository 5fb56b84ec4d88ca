package server_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	mcpgo "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
)

// TestInteropMCPGo drives the walkthrough with mark3labs/mcp-go, an MCP
// client written independently of the go-sdk the server uses, so the two
// SDKs agreeing with each other is not what makes the test pass.
func TestInteropMCPGo(t *testing.T) {
	tests := []struct {
		name        string
		opts        []mcpgo.ClientOption
		wantVersion string
	}{
		// mcp-go's default: probe with server/discover, no handshake.
		{"stateless discover", nil, mcp.ProtocolVersion20260728},
		// Clients that predate 2026-07-28 use the initialize handshake.
		{"initialize handshake", []mcpgo.ClientOption{mcpgo.WithProtocolVersion(mcp.ProtocolVersion20251125)}, mcp.ProtocolVersion20251125},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := servertest.Start(t, server.Config{})
			c := dialMCPGo(t, h.URL(store.OwnerWorker), h.OwnerToken, tt.opts...)
			initRes, err := c.Initialize(t.Context(), mcp.InitializeRequest{Params: mcp.InitializeParams{
				ClientInfo: mcp.Implementation{Name: "mcp-go-interop", Version: "1"},
			}})
			if err != nil {
				t.Fatalf("initialize: %v", err)
			}
			if initRes.ProtocolVersion != tt.wantVersion || initRes.ServerInfo.Name != "helix-org" {
				t.Errorf("initialize = version %q, server %q; want %q, helix-org", initRes.ProtocolVersion, initRes.ServerInfo.Name, tt.wantVersion)
			}
			walkthroughMCPGo(t, c)
		})
	}
}

func walkthroughMCPGo(t *testing.T, c *mcpgo.Client) {
	list, err := c.ListTools(t.Context(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	for _, want := range []string{"find_tools", "subscribe", "publish", "read_events"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools/list = %v, missing %s", names, want)
		}
	}
	// The owner holds more than is listed: the rest are found, then
	// called as they are named.
	found := mcpgoCall[struct{ Tools []struct{ Name string } }](t, c, "find_tools", map[string]any{"query": "create a role"})
	if len(found.Tools) == 0 || found.Tools[0].Name != "create_role" {
		t.Errorf("find_tools for creating a role = %+v, want create_role first", found.Tools)
	}

	role := mcpgoCall[domain.Role](t, c, "create_role", map[string]any{"title": "Echo", "content": "Reply `echo: <body>` on the stream."})
	pos := mcpgoCall[domain.Position](t, c, "create_position", map[string]any{"role": role.ID, "title": "Echo 1"})
	ai := mcpgoCall[domain.Worker](t, c, "hire_worker", map[string]any{"position": pos.ID, "kind": "ai", "name": "Echo", "id": "w-echo", "grants": []string{"publish", "read_events"}})
	human := mcpgoCall[domain.Worker](t, c, "hire_worker", map[string]any{"position": pos.ID, "kind": "human", "name": "Maya"})
	if ai.Kind != domain.WorkerAI || human.ID != "w-maya" || human.Kind != domain.WorkerHuman {
		t.Errorf("hired %+v and %+v, want ai w-echo and human w-maya", ai, human)
	}
	st := mcpgoCall[domain.Stream](t, c, "create_stream", map[string]any{"id": "s-inbox", "name": "inbox"})
	for _, w := range []string{ai.ID, human.ID, store.OwnerWorker} {
		mcpgoCall[map[string]any](t, c, "subscribe", map[string]any{"stream": st.ID, "worker": w})
	}
	ev := mcpgoCall[domain.Event](t, c, "publish", map[string]any{
		"stream": st.ID, "body": "hello", "subject": "greeting", "to": []string{"w-echo"},
		"threadId": "t-1", "messageId": "m-1", "bodyContentType": "text/plain", "extra": map[string]any{"k": "v"},
	})
	wantMsg := domain.Message{From: store.OwnerWorker, To: []string{"w-echo"}, Subject: "greeting", Body: "hello",
		ThreadID: "t-1", MessageID: "m-1", BodyContentType: "text/plain", Extra: json.RawMessage(`{"k":"v"}`)}
	if diff := cmp.Diff(wantMsg, ev.Message); diff != "" {
		t.Errorf("published message (-want +got):\n%s", diff)
	}

	read := mcpgoCall[readResult](t, c, "read_events", map[string]any{"streams": []string{st.ID}})
	if diff := cmp.Diff(readResult{Events: []domain.Event{ev}, Cursor: ev.Seq}, read); diff != "" {
		t.Errorf("read_events (-want +got):\n%s", diff)
	}
	if ev.StreamID != st.ID || ev.Source != store.OwnerWorker || ev.SourceKind != domain.SourceHuman || ev.CreatedAt.IsZero() {
		t.Errorf("event envelope = %+v", ev)
	}

	mcpgoCall[domain.Role](t, c, "update_role", map[string]any{"id": role.ID, "content": "Reply `loud: <BODY>`."})
	after := mcpgoCall[domain.Role](t, c, "get_role", map[string]any{"id": role.ID})
	if !strings.Contains(after.Content, "loud") {
		t.Errorf("get_role content = %q, want the new text", after.Content)
	}
}

func dialMCPGo(t *testing.T, url, token string, opts ...mcpgo.ClientOption) *mcpgo.Client {
	t.Helper()
	tr, err := transport.NewStreamableHTTP(url, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	if err != nil {
		t.Fatal(err)
	}
	c := mcpgo.NewClient(tr, opts...)
	if err := c.Start(t.Context()); err != nil {
		t.Fatalf("start mcp-go client: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// mcpgoCall calls a tool that must succeed and decodes its structured output.
func mcpgoCall[T any](t *testing.T, c *mcpgo.Client, name string, args map[string]any) T {
	t.Helper()
	res, err := c.CallTool(t.Context(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: name, Arguments: args}})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if res.IsError {
		var text []string
		for _, ct := range res.Content {
			if tc, ok := mcp.AsTextContent(ct); ok {
				text = append(text, tc.Text)
			}
		}
		t.Fatalf("%s(%v): tool error: %s", name, args, strings.Join(text, "\n"))
	}
	raw := res.RawStructuredContent
	if raw == nil {
		if raw, err = json.Marshal(res.StructuredContent); err != nil {
			t.Fatal(err)
		}
	}
	var out T
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s: decode %s: %v", name, raw, err)
	}
	return out
}
