package ui_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestArchiveStreamFromItsPage: the owner archives a stream from its page,
// behind its danger zone; the page then says it is archived and offers
// no composer, no new member and no archive, though its events are still
// read there, and the stream list shows it only when asked for archived
// streams.
func TestArchiveStreamFromItsPage(t *testing.T) {
	t.Parallel()
	o := newOrg(t)
	o.call(t, "create_stream", map[string]any{"id": "s-old", "name": "old", "transport": map[string]any{"kind": "webhook"}})
	o.call(t, "create_stream", map[string]any{"id": "s-live", "name": "live"})
	o.call(t, "publish", map[string]any{"stream": "s-old", "body": "Last words before the archive."})
	o.call(t, "subscribe", map[string]any{"stream": "s-old"})
	c := o.client(t, "w-owner")
	if _, page := c.get(t, "/ui/streams/s-old"); !strings.Contains(page, `<details class="danger-zone"><summary>Archive this stream</summary>`) ||
		!strings.Contains(page, `action="/ui/act/archive_stream"`) || !strings.Contains(page, `<span class="hint">live</span>`) {
		t.Fatalf("the page of a stream in use is not live or offers no archive behind its danger zone:\n%s", page)
	}
	status, _ := c.post(t, "/ui/act/archive_stream", url.Values{"csrf": {c.csrf}, "next": {"/ui/streams/s-old"}, "id": {"s-old"}}, nil)
	if status != http.StatusSeeOther || c.location != "/ui/streams/s-old" {
		t.Fatalf("archive_stream from the page: %d to %q, want 303 back to the stream", status, c.location)
	}
	tests := []struct {
		name, path string
		want, not  []string
	}{
		{name: "an archived stream's page", path: "/ui/streams/s-old",
			want: []string{`<span class="pill status-archived">archived `, "This stream is archived: it takes no new events or members and sends nothing; its history stays here.", "<dt>Archived</dt>",
				"Last words before the archive."},
			not: []string{`action="/ui/act/archive_stream"`, `action="/ui/act/publish"`, `action="/ui/act/subscribe"`, "not subscribed",
				`<span class="hint">live</span>`, `data-live="`}},
		{name: "a stream in use", path: "/ui/streams/s-live",
			want: []string{`action="/ui/act/archive_stream"`, `action="/ui/act/publish"`},
			not:  []string{"status-archived"}},
		{name: "the list leaves it out", path: "/ui/streams",
			want: []string{`href="/ui/streams/s-live"`, `<a href="/ui/streams?archived=1">Show archived streams</a>`},
			not:  []string{`href="/ui/streams/s-old"`}},
		{name: "the list with archived streams", path: "/ui/streams?archived=1",
			want: []string{`href="/ui/streams/s-old"`, `<span class="pill status-archived">archived `, `href="/ui/streams/s-live"`, "Hide archived streams"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, page := c.get(t, tt.path)
			if status != http.StatusOK {
				t.Fatalf("GET %s = %d", tt.path, status)
			}
			for _, w := range tt.want {
				if !strings.Contains(page, w) {
					t.Errorf("%s lacks %q", tt.path, w)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(page, n) {
					t.Errorf("%s shows %q", tt.path, n)
				}
			}
		})
	}
	// Archiving again from a stale page changes nothing and says nothing
	// went wrong.
	if status, _ := c.post(t, "/ui/act/archive_stream", url.Values{"csrf": {c.csrf}, "next": {"/ui/streams/s-old"}, "id": {"s-old"}}, nil); status != http.StatusSeeOther {
		t.Errorf("archiving again: %d, want 303", status)
	}
}
