package ui_test

import (
	"strings"
	"testing"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store/storetest"
)

// TestUndecodableEventsShown: events stored before the JSON limits held —
// an extra nested 1,001 levels deep, past what SQLite's JSON functions
// read — and a body damaged in the database (put there with raw SQL) never
// break a page or a read. The damaged one shows as its stored text with a
// marker on the stream page, in the inbox and in read_events; the deep one
// without its extra, with a marker, since MCP clients stop decoding at
// 1,000 levels.
func TestUndecodableEventsShown(t *testing.T) {
	t.Parallel()
	o := newOrg(t)
	st := o.h.Store
	o.call(t, "create_stream", map[string]any{"id": "s-raw", "name": "raw"})
	o.call(t, "subscribe", map[string]any{"stream": "s-raw"})
	o.call(t, "publish", map[string]any{"stream": "s-raw", "body": "before"})
	if _, err := st.Notify(t.Context(), "w-owner", domain.Message{Subject: "A notice", Body: "readable"}, ""); err != nil {
		t.Fatal(err)
	}
	deep := `{"body":"deep one","extra":` + strings.Repeat("[", 1001) + strings.Repeat("]", 1001) + `}`
	inbox := domain.InboxStream("w-owner")
	for _, row := range []struct{ id, stream, body string }{
		{"e-deep", "s-raw", deep},
		{"e-damaged", "s-raw", `{"body":"cut off mid-wri`},
		{"e-damaged-notice", inbox, `{"subject":"Budget`},
	} {
		storetest.Exec(t, st, "INSERT INTO events (id, stream_id, source, source_kind, caused_by, depth, created_at, body) VALUES ('"+
			row.id+"', '"+row.stream+"', '', 'system', '', 0, CURRENT_TIMESTAMP, '"+row.body+"')")
	}
	o.call(t, "publish", map[string]any{"stream": "s-raw", "body": "after"})

	marker := `<p class="undecodable" role="alert">Unreadable event: the stored message cannot be read (`
	c := o.client(t, "w-owner")
	pages := []struct {
		path string
		want []string
	}{
		{"/ui/streams/s-raw", []string{"before", "deep one", "Unreadable event: its extra (2002 bytes of JSON) nests more than 100 levels deep and is left out.",
			marker, `{&#34;body&#34;:&#34;cut off mid-wri`, "after"}},
		{"/ui/inbox", []string{"A notice", marker, `{&#34;subject&#34;:&#34;Budget`}},
	}
	for _, p := range pages {
		code, body := c.get(t, p.path)
		if code != 200 {
			t.Fatalf("GET %s = %d:\n%s", p.path, code, body)
		}
		for _, w := range p.want {
			if !strings.Contains(body, w) {
				t.Errorf("GET %s lacks %q:\n%s", p.path, w, body)
			}
		}
	}

	got := servertest.Call[struct{ Events []domain.Event }](t, o.owner, "read_events", map[string]any{"streams": []string{"s-raw"}})
	var bodies []string
	for _, ev := range got.Events {
		bodies = append(bodies, ev.Message.Body)
		if (ev.ID == "e-damaged" || ev.ID == "e-deep") != (ev.Undecodable != "") || ev.Message.Extra != nil {
			t.Errorf("event %s: undecodable %q", ev.ID, ev.Undecodable)
		}
	}
	if want := "before|deep one|{\"body\":\"cut off mid-wri|after"; strings.Join(bodies, "|") != want {
		t.Errorf("read_events bodies = %q, want %q", strings.Join(bodies, "|"), want)
	}
}
