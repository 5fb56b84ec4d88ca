package main

import (
	"strings"
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server"
	"github.com/helixml/helix-org/server/metrics"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
	"github.com/helixml/helix-org/transports/webhook"
)

// TestSoak: a short soak against a real server with its webhook route and
// metrics prints a line each interval with the server's memory, and a
// summary; nothing fails.
func TestSoak(t *testing.T) {
	st := storetest.NewWith(t, store.Options{Transports: servertest.Transports})
	m, err := metrics.New(t.Context(), st)
	if err != nil {
		t.Fatal(err)
	}
	hook := webhook.Endpoint(st, nil)
	h := servertest.StartWith(t, st, server.Config{Metrics: m,
		Routes: []server.Route{{Pattern: hook.Pattern, Handler: hook.Handler(st, nil, nil)}}})
	var out strings.Builder
	cfg := config{URL: domain.MCPURL(h.Server.URL, store.OwnerWorker), Token: h.OwnerToken, Stream: "s-load", Clients: 2,
		Soak: 1500 * time.Millisecond, Rate: 20, every: 500 * time.Millisecond}
	if err := run(t.Context(), cfg, &out); err != nil {
		t.Fatalf("soak: %v\n%s", err, out.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) < 4 || !strings.HasPrefix(lines[1], "minute") || !strings.HasPrefix(lines[2], "1 ") ||
		!strings.Contains(lines[len(lines)-1], "; 0 calls failed in all") || !strings.Contains(lines[len(lines)-1], "soak: rss ") {
		t.Errorf("soak printed:\n%s", out.String())
	}
	evs, err := st.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{"s-soak-hook"}})
	if err != nil || len(evs) < 10 {
		t.Errorf("the webhook stream holds %d events (%v), want the soak's deliveries", len(evs), err)
	}
}
