package server_test

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
)

// TestConcurrentPublish has 50 MCP clients publish 100 events each at once
// onto a few streams: every publish succeeds, is stored exactly once, and
// each stream's and each client's events come back in order.
func TestConcurrentPublish(t *testing.T) {
	const clients, each = 50, 100
	streams := []string{"s-load-0", "s-load-1", "s-load-2", "s-load-3"}

	var serverErrs logSink
	h := servertest.Start(t, server.Config{Logger: slog.New(slog.NewTextHandler(&serverErrs, &slog.HandlerOptions{Level: slog.LevelError}))})
	owner := h.Owner(t)
	for _, id := range streams {
		servertest.Call[domain.Stream](t, owner, "create_stream", map[string]any{"id": id, "name": id})
	}
	// One pool big enough for every client, so the test measures the server
	// rather than a churn of fresh TCP connections.
	pool := &http.Transport{MaxIdleConnsPerHost: clients}
	t.Cleanup(pool.CloseIdleConnections)
	sessions := make([]*mcp.ClientSession, clients)
	for i := range sessions {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: fmt.Sprintf("load-%02d", i), Version: "1"}, nil).Connect(t.Context(),
			&mcp.StreamableClientTransport{Endpoint: h.URL(store.OwnerWorker), HTTPClient: &http.Client{Transport: servertest.BearerTransport{Token: h.OwnerToken, Base: pool}}}, nil)
		if err != nil {
			t.Fatalf("client %d: connect: %v", i, err)
		}
		t.Cleanup(func() { cs.Close() })
		sessions[i] = cs
	}

	// published[i][j] is what client i's j-th publish returned.
	published := make([][]domain.Event, clients)
	var (
		mu   sync.Mutex
		errs []string
		wg   sync.WaitGroup
	)
	start := time.Now()
	for i, cs := range sessions {
		published[i] = make([]domain.Event, each)
		wg.Go(func() {
			for j := range each {
				body := fmt.Sprintf("c%02d-%03d", i, j)
				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "publish",
					Arguments: map[string]any{"stream": streams[(i+j)%len(streams)], "body": body}})
				var ev domain.Event
				if err == nil && res.IsError {
					err = fmt.Errorf("tool error: %s", servertest.Text(res))
				}
				if err == nil {
					err = decodeInto(res, &ev)
				}
				if err != nil {
					mu.Lock()
					errs = append(errs, fmt.Sprintf("%s: %v", body, err))
					mu.Unlock()
					continue
				}
				published[i][j] = ev
			}
		})
	}
	wg.Wait()
	t.Logf("%d publishes from %d clients in %v", clients*each, clients, time.Since(start))

	var busy []string
	for _, e := range errs {
		if strings.Contains(e, "database is locked") || strings.Contains(e, "SQLITE_BUSY") {
			busy = append(busy, e)
		}
	}
	if len(busy) > 0 {
		t.Errorf("%d callers saw SQLite contention; first: %s", len(busy), busy[0])
	}
	if len(errs) > 0 {
		t.Fatalf("%d of %d publishes failed; first: %s", len(errs), clients*each, errs[0])
	}
	if logged := serverErrs.String(); logged != "" {
		t.Errorf("server logged errors:\n%s", logged)
	}

	stored := map[string]domain.Event{} // by body
	seqs := map[int64]string{}
	for _, id := range streams {
		var prev int64
		for _, ev := range readAll(t, h.Store, id) {
			if ev.StreamID != id {
				t.Fatalf("read of %s returned %s from %s", id, ev.ID, ev.StreamID)
			}
			if ev.Seq <= prev {
				t.Errorf("%s: seq %d follows %d, want strictly increasing", id, ev.Seq, prev)
			}
			prev = ev.Seq
			if other, dup := stored[ev.Message.Body]; dup {
				t.Errorf("body %q stored twice: %s and %s", ev.Message.Body, other.ID, ev.ID)
			}
			if other, dup := seqs[ev.Seq]; dup {
				t.Errorf("seq %d given to both %s and %s", ev.Seq, other, ev.ID)
			}
			stored[ev.Message.Body], seqs[ev.Seq] = ev, ev.ID
		}
	}
	if len(stored) != clients*each {
		t.Errorf("stored %d distinct events, want %d", len(stored), clients*each)
	}
	for i := range clients {
		for j, ev := range published[i] {
			body := fmt.Sprintf("c%02d-%03d", i, j)
			got, ok := stored[body]
			switch {
			case !ok:
				t.Errorf("%s: acknowledged as %s but not stored", body, ev.ID)
			case got.ID != ev.ID || got.Seq != ev.Seq || got.StreamID != ev.StreamID:
				t.Errorf("%s: acknowledged as %s #%d on %s, stored as %s #%d on %s", body, ev.ID, ev.Seq, ev.StreamID, got.ID, got.Seq, got.StreamID)
			case j > 0 && ev.Seq <= published[i][j-1].Seq:
				t.Errorf("%s: seq %d not after the client's previous publish (%d)", body, ev.Seq, published[i][j-1].Seq)
			}
		}
	}
}

// logSink collects the server's log lines from its many goroutines.
type logSink struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *logSink) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logSink) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// readAll pages through a stream with the cursor, as a client would.
func readAll(t *testing.T, st *store.Store, stream string) []domain.Event {
	t.Helper()
	var all []domain.Event
	var since int64
	for {
		evs, err := st.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{stream}, Since: since})
		if err != nil {
			t.Fatalf("read %s: %v", stream, err)
		}
		if len(evs) == 0 {
			return all
		}
		all = append(all, evs...)
		since = evs[len(evs)-1].Seq
	}
}
