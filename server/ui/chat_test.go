package ui_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/helixml/helix-org/server/servertest"
)

// TestChatSaysWhenAWorkerCannotReply: chatting with an AI worker that
// holds no tool to answer with says so, and where to grant one, instead
// of leaving the message unanswered with no word why.
func TestChatSaysWhenAWorkerCannotReply(t *testing.T) {
	t.Parallel()
	o := newOrg(t)
	o.call(t, "create_role", map[string]any{"id": "r-echo", "title": "Echo", "content": "Reply `echo: <body>`."})
	for _, p := range []string{"p-mute", "p-pub", "p-dm", "p-person"} {
		o.call(t, "create_position", map[string]any{"id": p, "role": "r-echo", "title": p})
	}
	hire := func(id, pos, kind string, grants ...string) {
		o.call(t, "hire_worker", map[string]any{"id": id, "position": pos, "kind": kind, "name": "Name-" + id, "grants": grants})
	}
	hire("w-mute", "p-mute", "ai", "read_events")
	hire("w-pub", "p-pub", "ai", "publish")
	hire("w-dm", "p-dm", "ai", "dm")
	hire("w-maya", "p-person", "human")
	const note = "holds neither <code>publish</code> nor <code>dm</code>, so it is woken by your message but cannot reply."
	tests := []struct {
		worker string
		mute   bool
	}{
		{"w-mute", true},
		{"w-pub", false},
		{"w-dm", false},
		{"w-maya", false}, // a person replies however they like
	}
	c := o.client(t, "w-owner")
	for _, tt := range tests {
		t.Run(tt.worker, func(t *testing.T) {
			status, body := c.get(t, "/ui/chat/"+tt.worker)
			if status != http.StatusOK {
				t.Fatalf("GET /ui/chat/%s: %d", tt.worker, status)
			}
			if got := strings.Contains(body, "Name-"+tt.worker+" "+note); got != tt.mute {
				t.Errorf("the page says it cannot reply: %v, want %v", got, tt.mute)
			}
			if tt.mute && !strings.Contains(body, `<a href="/ui/workers/`+tt.worker+`#grants">Grant it one</a>`) {
				t.Errorf("the note has no link to grant a tool:\n%.3000s", body)
			}
		})
	}
	// Granted publish, it can reply: the note goes.
	o.call(t, "grant_tool", map[string]any{"worker": "w-mute", "tool": "publish"})
	if _, body := c.get(t, "/ui/chat/w-mute"); strings.Contains(body, note) {
		t.Error("granted publish, the chat still says it cannot reply")
	}
}

// TestChatNamesWhoSpoke: a chat's messages are under their senders' names,
// on the page and as they arrive live, with the id kept as the title.
func TestChatNamesWhoSpoke(t *testing.T) {
	t.Parallel()
	o := newOrg(t)
	o.call(t, "create_role", map[string]any{"id": "r-desk", "title": "Desk", "content": "Answers."})
	o.call(t, "create_position", map[string]any{"id": "p-desk", "role": "r-desk", "title": "Desk"})
	o.call(t, "hire_worker", map[string]any{"id": "w-maya", "position": "p-desk", "kind": "human", "name": "Maya", "grants": []string{"dm"}})
	o.call(t, "dm", map[string]any{"to": "w-maya", "body": "Hello Maya"})
	c := o.client(t, "w-owner")
	_, page := c.get(t, "/ui/chat/w-maya")
	if want := `<span class="from" title="w-owner">Owner</span>`; !strings.Contains(page, want) {
		t.Errorf("the owner's message is not under its name: want %s in\n%s", want, between(page, `id="messages"`, "</div>"))
	}
	live := openPageLive(t, o, c, "/ui/chat/w-maya", "chat")
	maya := o.h.Connect(t, "w-maya", servertest.Token(t, o.h.Store, "w-maya"))
	servertest.Call[any](t, maya, "dm", map[string]any{"to": "w-owner", "body": "Hi, Maya here"})
	for {
		ev := live.next(t, 10*time.Second, false)
		if ev.Name != "ev" || !strings.Contains(ev.Data, "Maya here") {
			continue
		}
		if want := `\u003cspan class=\"from\" title=\"w-maya\"\u003eMaya\u003c/span\u003e`; !strings.Contains(ev.Data, want) {
			t.Errorf("Maya's reply, live, is not under her name:\n%s", ev.Data)
		}
		break
	}
}
