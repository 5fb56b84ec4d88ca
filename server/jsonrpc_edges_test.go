package server_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/helixml/helix-org/server"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
)

// TestJSONRPCEdges sends, as raw HTTP at every protocol revision the
// server speaks, a request for a method nobody serves and messages that
// are no JSON-RPC message at all. The first is answered with JSON-RPC's
// method-not-found (-32601) carrying the request's id, the second with
// invalid request (-32600) and 400: never plain text, never accepted.
func TestJSONRPCEdges(t *testing.T) {
	h := servertest.Start(t, server.Config{})
	url := h.URL(store.OwnerWorker)
	for _, version := range []string{"2024-11-05", "2025-03-26", "2025-06-18", v20251125, v20260728} {
		params := ""
		if version == v20260728 {
			params = `,"params":{` + meta26(version) + `}`
		}
		// 2026-07-28 maps JSON-RPC errors to HTTP statuses (the go-sdk's
		// 404); before it, a JSON-RPC error is an answer like any other.
		notFound := 200
		if version == v20260728 {
			notFound = 404
		}
		cases := []struct {
			name       string
			body       string
			wantStatus int
			wantCode   int
			wantID     string // the id the answer carries, as JSON
			want       string // in the error's message
		}{
			{"an unknown method, a number id", `{"jsonrpc":"2.0","id":41,"method":"no/such/method"` + params + `}`, notFound, -32601, `41`, `"no/such/method"`},
			{"an unknown method, a string id", `{"jsonrpc":"2.0","id":"q-7","method":"tools/frobnicate"` + params + `}`, notFound, -32601, `"q-7"`, `"tools/frobnicate"`},
			{"only jsonrpc and id", `{"jsonrpc":"2.0","id":42}`, 400, -32600, `42`, "neither a method (a request or notification) nor a result or error (a response)"},
			{"an empty method", `{"jsonrpc":"2.0","id":"e","method":""` + params + `}`, 400, -32600, `"e"`, "neither a method"},
			{"an unknown notification", `{"jsonrpc":"2.0","method":"notifications/frobnicated"` + params + `}`, 400, -32601, `null`, `"notifications/frobnicated"`},
		}
		for _, c := range cases {
			t.Run(version+"/"+c.name, func(t *testing.T) {
				x := post(t, url, h.OwnerToken, c.body, map[string]string{"MCP-Protocol-Version": version})
				if x.status != c.wantStatus || !strings.HasPrefix(x.respHeader.Get("Content-Type"), "application/json") {
					t.Fatalf("answer %d %q %s, want %d in JSON", x.status, x.respHeader.Get("Content-Type"), x.respBody, c.wantStatus)
				}
				var resp struct {
					JSONRPC string          `json:"jsonrpc"`
					ID      json.RawMessage `json:"id"`
					Error   *struct {
						Code    int    `json:"code"`
						Message string `json:"message"`
					} `json:"error"`
				}
				if err := json.Unmarshal(x.respBody, &resp); err != nil || resp.JSONRPC != "2.0" || resp.Error == nil {
					t.Fatalf("answer %s is not a JSON-RPC error (%v)", x.respBody, err)
				}
				if resp.Error.Code != c.wantCode || string(resp.ID) != c.wantID || !strings.Contains(resp.Error.Message, c.want) {
					t.Errorf("error %d %q with id %s; want %d naming %q with id %s", resp.Error.Code, resp.Error.Message, resp.ID, c.wantCode, c.want, c.wantID)
				}
				if c.wantID != "null" {
					if _, err := decodeMessage(x.respBody); err != nil {
						t.Errorf("the answer fails the strict decode: %v", err)
					}
				}
			})
		}
	}
}
