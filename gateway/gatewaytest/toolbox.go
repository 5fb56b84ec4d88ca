package gatewaytest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tide is what the toolbox's tide_forecast answers.
const Tide = "high tide at Dover: 6.1 m at 14:02"

// StartToolbox serves an outside server with n read-only tools (n ≥ 1)
// over Streamable HTTP, without credentials: n-1 plain ones (tool_00, …)
// and tide_forecast, the one a search should find. It returns its URL.
func StartToolbox(t testing.TB, n int) string {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "toolbox", Version: "1"}, nil)
	type in struct {
		Place string `json:"place" jsonschema:"the place, by name"`
	}
	type out struct {
		Text string `json:"text"`
	}
	things := []string{"weather", "traffic", "air quality", "pollen", "sunrise", "moon phase", "river levels", "snow depth"}
	for i := range n - 1 {
		text := fmt.Sprintf("%s report %d", things[i%len(things)], i)
		mcp.AddTool(srv, &mcp.Tool{Name: fmt.Sprintf("tool_%02d", i), Description: fmt.Sprintf("Report the %s for a place.", things[i%len(things)]),
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
			func(context.Context, *mcp.CallToolRequest, in) (*mcp.CallToolResult, out, error) {
				return nil, out{Text: text}, nil
			})
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "tide_forecast", Description: "Forecast the height of the tide at a harbour.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *mcp.CallToolRequest, in) (*mcp.CallToolResult, out, error) {
			return nil, out{Text: Tide}, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{JSONResponse: true})
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}
