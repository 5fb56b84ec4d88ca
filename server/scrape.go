package server

import (
	"context"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/server/metrics"
	"github.com/helixml/helix-org/store"
)

// handleMetrics serves the metrics to the owner alone: they describe the
// whole org's traffic and spend. Scrapers that cannot send a token use
// serve's --metrics-addr, a listener of their own.
func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request) {
	info, ok := s.verify(w, r)
	if !ok {
		return
	}
	if info.WorkerID != store.OwnerWorker {
		http.Error(w, "forbidden: only the owner's token may read /metrics", http.StatusForbidden)
		return
	}
	s.cfg.Metrics.Handler().ServeHTTP(w, r)
}

// countToolCalls counts every tools/call by tool and outcome: ok, a tool
// error, or rejected before the tool ran. A name that is no tool counts
// as "unknown", so clients cannot grow the series.
func countToolCalls(m *metrics.Metrics, known []string) mcp.Middleware {
	names := make(map[string]bool, len(known))
	for _, k := range known {
		names[k] = true
	}
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			p, ok := req.GetParams().(*mcp.CallToolParamsRaw)
			if method != "tools/call" || !ok {
				return res, err
			}
			tool, outcome := p.Name, "ok"
			if !names[tool] {
				tool = "unknown"
			}
			if r, isResult := res.(*mcp.CallToolResult); err != nil || !isResult {
				outcome = "rejected"
			} else if r.IsError {
				outcome = "tool_error"
			}
			m.ToolCall(tool, outcome)
			return res, err
		}
	}
}
