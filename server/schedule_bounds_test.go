package server_test

import (
	"strings"
	"testing"

	"github.com/helixml/helix-org/server"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/transports/schedule"
)

// TestScheduleBounds: a worker holding create_stream, over a real client,
// cannot fill the clock with every-minute schedules: ticks faster than
// schedule.min_interval are refused, and so is its schedule past
// schedule.max_per_worker, which counts each worker's own.
func TestScheduleBounds(t *testing.T) {
	h := servertest.Start(t, server.Config{})
	owner := h.Owner(t)
	seedOrg(t, h, owner)
	for _, id := range []string{"w-a", "w-b"} {
		servertest.Call[any](t, owner, "hire_worker", map[string]any{"id": id, "position": "p-support", "kind": "ai", "name": id, "grants": []string{"create_stream"}})
	}
	if err := h.Store.SetSetting(t.Context(), schedule.MinIntervalSetting, "15m"); err != nil {
		t.Fatal(err)
	}
	if err := h.Store.SetSetting(t.Context(), schedule.MaxPerWorkerSetting, "2"); err != nil {
		t.Fatal(err)
	}
	a := h.Connect(t, "w-a", servertest.Token(t, h.Store, "w-a"))
	b := h.Connect(t, "w-b", servertest.Token(t, h.Store, "w-b"))
	tick := func(cron string) map[string]any {
		return map[string]any{"name": "tick " + cron, "transport": map[string]any{"kind": "schedule", "config": map[string]any{"cron": cron}}}
	}
	for _, cron := range []string{"* * * * *", "*/5 * * * *", "0,10 * * * *"} {
		if got := servertest.CallErr(t, a, "create_stream", tick(cron)); !strings.Contains(got, "(the setting schedule.min_interval)") {
			t.Errorf("w-a's %q: %q, want refused naming schedule.min_interval", cron, got)
		}
	}
	servertest.Call[any](t, a, "create_stream", tick("*/15 * * * *"))
	servertest.Call[any](t, a, "create_stream", tick("0 8 * * *"))
	if got := servertest.CallErr(t, a, "create_stream", tick("0 9 * * *")); !strings.Contains(got, "you have made 2 schedule streams, the most one worker may (the setting schedule.max_per_worker)") {
		t.Errorf("w-a's third: %q", got)
	}
	servertest.Call[any](t, b, "create_stream", tick("0 9 * * *")) // w-b's own count
	servertest.Call[any](t, a, "create_stream", map[string]any{"name": "plain"})
}
