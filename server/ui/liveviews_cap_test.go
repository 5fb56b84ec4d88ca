package ui_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server/ui"
)

// TestLiveViewCaps: real live views (SSE connections) past
// ui.live_views_per_session for one session, or past ui.live_views_max
// for the server, are refused with 429 and a message naming the setting;
// a view that closes frees its place.
func TestLiveViewCaps(t *testing.T) {
	t.Parallel()
	o := newOrg(t)
	o.call(t, "create_stream", map[string]any{"id": "s-a", "name": "a"})
	o.call(t, "subscribe", map[string]any{"stream": "s-a"})
	for _, set := range []struct {
		spec  domain.SettingSpec
		value string
	}{{ui.LiveViewsPerSessionSetting, "2"}, {ui.LiveViewsMaxSetting, "3"}} {
		if err := o.h.Store.SetSetting(t.Context(), set.spec, set.value); err != nil {
			t.Fatal(err)
		}
	}
	url := "/ui/live?view=stream&stream=s-a"
	alice, bob := o.client(t, "w-owner"), o.client(t, "w-owner")
	open := map[string]func(){}
	steps := []struct {
		name       string
		c          *client
		want       int
		retryAfter string
		msg        string
	}{
		{"alice 1", alice, 200, "", ""},
		{"alice 2", alice, 200, "", ""},
		{"alice 3: past her session's cap", alice, 429, "", "live view refused: too many live views: this session has 2 open, the most ui.live_views_per_session allows; close a page or two (each live page holds one)"},
		{"bob 1", bob, 200, "", ""},
		{"bob 2: past the server's cap", bob, 429, "30", "live view refused: too many live views: the server has 3 open, the most ui.live_views_max allows; try again later"},
	}
	for _, s := range steps {
		code, retry, body, closeView := tryLive(t, s.c, url)
		if code != s.want || retry != s.retryAfter || !strings.Contains(body, s.msg) {
			t.Fatalf("%s: %d (Retry-After %q) %q, want %d (Retry-After %q) %q", s.name, code, retry, body, s.want, s.retryAfter, s.msg)
		}
		if code == 200 {
			open[s.name] = closeView
		}
	}
	// Alice closes a page: Bob's next view fits once the server sees it go.
	open["alice 1"]()
	waitFor(t, "a new view to fit once one closed", 10*time.Second, func() bool {
		code, _, _, closeView := tryLive(t, bob, url)
		if code == 200 {
			closeView()
		}
		return code == 200
	})
}

// tryLive opens a live view. An open one is read until the server has
// sent its first bytes (it counts from then on) and closed by the
// returned function; a refused one returns its status and body.
func tryLive(t *testing.T, c *client, path string) (code int, retryAfter, body string, closeView func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	resp, err := c.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		return resp.StatusCode, resp.Header.Get("Retry-After"), string(b), nil
	}
	first := make([]byte, len("retry:"))
	if _, err := io.ReadFull(resp.Body, first); err != nil || string(first) != "retry:" {
		t.Fatalf("live view opened with %q, %v", first, err)
	}
	t.Cleanup(cancel)
	return 200, "", "", func() { cancel(); resp.Body.Close() }
}
