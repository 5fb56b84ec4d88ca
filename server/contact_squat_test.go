package server_test

import (
	"strings"
	"testing"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
)

// TestContactStreamSquatting replays, with real clients over HTTP, how a
// worker holding create_stream, subscribe and read_events could once read
// a person's direct messages: make s-contact-<person> before set_contact
// does (set_contact took it over and copied the DMs there), or subscribe
// to the real one. Each way is refused, and the DM stays out of the
// squatter's reach.
func TestContactStreamSquatting(t *testing.T) {
	h := servertest.Start(t, server.Config{})
	owner := h.Owner(t)
	seedOrg(t, h, owner) // w-maya (human) and w-echo (ai) in p-support
	servertest.Call[any](t, owner, "hire_worker", map[string]any{"id": "w-sq", "position": "p-support", "kind": "ai", "name": "Squatter",
		"grants": []string{"create_stream", "subscribe", "read_events"}})
	servertest.Call[any](t, owner, "hire_worker", map[string]any{"id": "w-lee", "position": "p-support", "kind": "human", "name": "Lee"})
	sq := h.Connect(t, "w-sq", servertest.Token(t, h.Store, "w-sq"))

	// Before the contact is set: the stream cannot be made, by id or name.
	for _, args := range []map[string]any{
		{"id": "s-contact-w-maya", "name": "contact w-maya", "description": "messages to and from w-maya"},
		{"name": "contact w-maya"},
	} {
		if got := servertest.CallErr(t, sq, "create_stream", args); !strings.Contains(got, `"s-contact-w-maya" is reserved: ids starting "s-contact-"`) {
			t.Errorf("create_stream %v = %q, want the prefix refused", args, got)
		}
	}

	// After: the real one is the person's alone.
	servertest.Call[any](t, owner, "set_contact", map[string]any{"worker": "w-maya", "channel": "email", "address": "maya@example.com"})
	for tool, args := range map[string]map[string]any{
		"subscribe":   {"stream": "s-contact-w-maya"},
		"read_events": {"streams": []string{"s-contact-w-maya"}},
	} {
		if got := servertest.CallErr(t, sq, tool, args); !strings.Contains(got, "s-contact-w-maya is w-maya's contact stream, with copies of their direct messages; only w-maya reads it") {
			t.Errorf("%s = %q, want the reading rule", tool, got)
		}
	}
	servertest.Call[any](t, owner, "dm", map[string]any{"to": "w-maya", "body": "the door code is 4711"})
	if evs := events(t, h.Store, "s-contact-w-maya"); len(evs) != 1 || evs[0].Message.Body != "the door code is 4711" {
		t.Fatalf("contact stream = %+v; want the DM copied for Maya's mail", evs)
	}

	// A database from before the prefix was reserved may hold a stream a
	// peer made: set_contact refuses it, and nothing is copied there.
	if _, err := h.Store.CreateStream(t.Context(), "w-sq", domain.Stream{ID: "s-contact-w-lee", Name: "contact w-lee",
		Description: "messages to and from w-lee", Transport: domain.Transport{Kind: domain.TransportLocal}}); err != nil {
		t.Fatal(err)
	}
	got := servertest.CallErr(t, owner, "set_contact", map[string]any{"worker": "w-lee", "channel": "email", "address": "lee@example.com"})
	if !strings.Contains(got, "stream s-contact-w-lee exists but was made by w-sq, not by set_contact") {
		t.Errorf("set_contact over a squatted stream = %q", got)
	}
	servertest.Call[any](t, owner, "dm", map[string]any{"to": "w-lee", "body": "the safe code is 1234"})
	if evs := events(t, h.Store, "s-contact-w-lee"); len(evs) != 0 {
		t.Errorf("the squatted stream received %+v", evs)
	}
	if got := servertest.CallErr(t, sq, "subscribe", map[string]any{"stream": "s-contact-w-lee"}); !strings.Contains(got, "only w-lee reads it") {
		t.Errorf("subscribe to the squatted stream = %q, want the reading rule", got)
	}
}

func events(t *testing.T, st *store.Store, stream string) []domain.Event {
	t.Helper()
	evs, err := st.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{stream}})
	if err != nil {
		t.Fatal(err)
	}
	return evs
}
