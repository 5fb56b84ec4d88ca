package main

import (
	"html"
	"io"
	"net/http"
	"regexp"
	"testing"
	"time"
)

// TestShutdownEndsLiveViews: a browser tab left open on a page with a live
// view does not hold up the server's shutdown. Before, HTTP's shutdown
// waited for the view until its 5s deadline and serve failed with
// "context deadline exceeded" — an operator's Ctrl-C exited 1.
func TestShutdownEndsLiveViews(t *testing.T) {
	t.Parallel()
	db, key, st := orgsDB(t, "north")
	base, _, stop := serveInProcess(t, st, io.Discard, serveConfig{dbFlags: dbFlags{DB: db, KeyFile: key}})
	north := newOrgSite(t, db, key, base, "north")
	north.call(t, "create_stream", map[string]any{"id": "s-inbox", "name": "inbox"})
	north.call(t, "subscribe", map[string]any{"stream": "s-inbox"})
	page := north.get(t, north.url+"/ui/streams/s-inbox", http.StatusOK)
	m := regexp.MustCompile(`data-live="([^"]+)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("north's stream page has no live view")
	}
	live := openOrgLive(t, north.web, base+html.UnescapeString(m[1]))

	if err := stop(); err != nil {
		t.Errorf("serve, shut down with a live view open: %v; want a clean exit", err)
	}
	live.ends(t, time.Second)
}
