package metrics_test

import (
	"testing"
	"time"

	"github.com/helixml/helix-org/server/metrics"
	"github.com/helixml/helix-org/store/storetest"
)

// BenchmarkPublishHooks is what metrics add to one publish over MCP: its
// HTTP request and its tool call.
func BenchmarkPublishHooks(b *testing.B) {
	m, err := metrics.New(b.Context(), storetest.New(b))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.HTTPRequest("POST /workers/{id}/mcp", 200, 3*time.Millisecond)
			m.ToolCall("publish", "ok")
		}
	})
}
