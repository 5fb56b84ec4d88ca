package ui_test

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/helixml/helix-org/server"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/server/ui"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
	"github.com/helixml/helix-org/transports/inbound"
)

// TestSessionExpiry: when a session's time (ui.session_ttl, 12 h unless
// set) has passed, an open live view is told the session ended and
// stops, and the next page asks to sign in again.
func TestSessionExpiry(t *testing.T) {
	t.Parallel()
	// The store's clock starts at the real time, as a server's does.
	clock := storetest.NewClock(time.Now().UTC().Truncate(time.Second))
	st := storetest.NewWith(t, store.Options{Now: clock.Now, Transports: servertest.Transports})
	h := servertest.StartWith(t, st, server.Config{})
	o := &org{h: h, owner: h.Owner(t)}
	withMaya(t, o)
	o.call(t, "create_stream", map[string]any{"id": "s-a", "name": "a"})
	o.call(t, "subscribe", map[string]any{"stream": "s-a", "worker": "w-maya"})
	hs := httptest.NewServer(ui.New(st, ui.Config{PingInterval: 50 * time.Millisecond, Status: inbound.Status}))
	t.Cleanup(hs.Close)
	o.base = hs.URL

	c := o.client(t, "w-maya")
	s := openLive(t, c.Client, hs.URL+"/ui/live?view=stream&stream=s-a&since=0", "")
	clock.Advance(12*time.Hour - time.Minute)
	if code, body := c.get(t, "/ui/streams"); code != 200 || !strings.Contains(body, `<meta name="csrf-token"`) {
		t.Fatalf("a minute before expiry: %d, want the page, signed in:\n%s", code, body)
	}
	clock.Advance(2 * time.Minute)
	for {
		ev := s.next(t, 5*time.Second, false)
		if ev.Name == "ended" {
			if !strings.Contains(ev.Data, store.ErrNoSession.Error()) {
				t.Errorf("ended with %q, want it to say the session ended", ev.Data)
			}
			break
		}
	}
	if code, body := c.get(t, "/ui/streams"); code != 200 || !strings.Contains(body, `action="/ui/signin"`) || strings.Contains(body, `<meta name="csrf-token"`) {
		t.Errorf("after expiry: %d, want the sign-in form:\n%s", code, body)
	}
}
