package server_test

import (
	"strings"
	"testing"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server"
	"github.com/helixml/helix-org/server/servertest"
)

// TestWalkthrough is the org of the README's walkthrough and docs/concepts.md, driven by a real
// MCP client over HTTP against a real server and SQLite file.
func TestWalkthrough(t *testing.T) {
	h := servertest.Start(t, server.Config{})
	owner := h.Owner(t)

	role := servertest.Call[domain.Role](t, owner, "create_role", map[string]any{"title": "Echo", "content": "Reply `echo: <body>` on the stream."})
	pos := servertest.Call[domain.Position](t, owner, "create_position", map[string]any{"role": role.ID, "title": "Echo 1"})
	ai := servertest.Call[domain.Worker](t, owner, "hire_worker", map[string]any{"position": pos.ID, "kind": "ai", "name": "Echo", "id": "w-echo", "grants": []string{"publish", "read_events"}})
	human := servertest.Call[domain.Worker](t, owner, "hire_worker", map[string]any{"position": pos.ID, "kind": "human", "name": "Maya"})
	if human.ID != "w-maya" {
		t.Errorf("human id = %q, want w-maya derived from the name", human.ID)
	}
	st := servertest.Call[domain.Stream](t, owner, "create_stream", map[string]any{"id": "s-inbox", "name": "inbox"})
	for _, w := range []string{ai.ID, human.ID, "w-owner"} {
		servertest.Call[map[string]any](t, owner, "subscribe", map[string]any{"stream": st.ID, "worker": w})
	}
	ev := servertest.Call[domain.Event](t, owner, "publish", map[string]any{
		"stream": st.ID, "body": "hello", "subject": "greeting", "to": []string{"w-echo"},
		"threadId": "t-1", "messageId": "m-1", "bodyContentType": "text/plain", "extra": map[string]any{"k": "v"},
	})
	read := servertest.Call[struct {
		Events []domain.Event `json:"events"`
		Cursor int64          `json:"cursor"`
	}](t, owner, "read_events", map[string]any{"streams": []string{st.ID}})
	if len(read.Events) != 1 {
		t.Fatalf("read_events returned %d events, want 1", len(read.Events))
	}
	got := read.Events[0]
	if got.ID != ev.ID || got.Message.Body != "hello" || got.Message.Subject != "greeting" || got.Message.ThreadID != "t-1" ||
		got.Message.MessageID != "m-1" || got.Message.From != "w-owner" || got.Message.To[0] != "w-echo" ||
		got.Message.BodyContentType != "text/plain" || string(got.Message.Extra) != `{"k":"v"}` || got.SourceKind != domain.SourceHuman {
		t.Errorf("event envelope = %+v", got)
	}
	if read.Cursor != got.Seq {
		t.Errorf("cursor = %d, want %d", read.Cursor, got.Seq)
	}

	servertest.Call[domain.Role](t, owner, "update_role", map[string]any{"id": role.ID, "content": "Reply `loud: <BODY>`."})
	after := servertest.Call[domain.Role](t, owner, "get_role", map[string]any{"id": role.ID})
	if !strings.Contains(after.Content, "loud") {
		t.Errorf("get_role content = %q, want the new text", after.Content)
	}
}
