package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store/storetest"
	"github.com/helixml/helix-org/tools"
)

// batchOf is a JSON-RPC batch of n publish calls.
func batchOf(n int) []byte {
	calls := make([]map[string]any, n)
	for i := range calls {
		calls[i] = map[string]any{"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
			"params": map[string]any{"name": "publish", "arguments": map[string]any{"stream": "s-inbox", "body": fmt.Sprint("batched ", i)}}}
	}
	b, _ := json.Marshal(calls)
	return b
}

// TestBatchRefused: a JSON-RPC batch gets a 400 JSON-RPC error and stores
// nothing, whatever protocol revision the client claims. The SDK alone
// refuses batches only from clients declaring 2025-06-18 or later, and
// parses the whole batch first; older and undeclared clients had 2,000
// publishes accepted in one request.
func TestBatchRefused(t *testing.T) {
	h := servertest.Start(t, server.Config{})
	owner := h.Owner(t)
	servertest.Call[any](t, owner, "create_stream", map[string]any{"id": "s-inbox", "name": "inbox"})
	tests := []struct {
		name, version string
		body          []byte
	}{
		{"no protocol version header", "", batchOf(2000)},
		{"2024-11-05", "2024-11-05", batchOf(2000)},
		{"2025-03-26", "2025-03-26", batchOf(2000)},
		{"2025-06-18", "2025-06-18", batchOf(2000)},
		{"2025-11-25", "2025-11-25", batchOf(2)},
		{"leading whitespace", "2025-03-26", append([]byte(" \r\n\t"), batchOf(2)...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, _ := h.Store.LastSeq(t.Context())
			req, _ := http.NewRequest(http.MethodPost, h.URL("w-owner"), bytes.NewReader(tt.body))
			req.Header.Set("Authorization", "Bearer "+h.OwnerToken)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if tt.version != "" {
				req.Header.Set("Mcp-Protocol-Version", tt.version)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var got struct {
				JSONRPC string `json:"jsonrpc"`
				ID      any    `json:"id"`
				Error   struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			raw, _ := io.ReadAll(resp.Body)
			if err := json.Unmarshal(raw, &got); err != nil || resp.StatusCode != 400 || got.JSONRPC != "2.0" || got.ID != nil ||
				got.Error.Code != -32600 || !strings.Contains(got.Error.Message, "JSON-RPC batches are not supported") {
				t.Errorf("answer %d %s, want 400 with a JSON-RPC invalid-request error", resp.StatusCode, raw)
			}
			if after, _ := h.Store.LastSeq(t.Context()); after != before {
				t.Errorf("a refused batch stored %d events", after-before)
			}
		})
	}
	// One call per POST still works, before and after.
	servertest.Call[domain.Event](t, owner, "publish", map[string]any{"stream": "s-inbox", "body": "single"})
}

// TestDeepJSONRefused: a tools/call nested 1,000 levels deep is answered
// with a JSON-RPC error naming the limit, on the direct path (2025-11-25
// plain calls) and the go-sdk's (2024-11-05), whose decoders take any
// depth; nothing is stored, and the stream reads as before. A message
// whose id cannot be read gets a 400.
func TestDeepJSONRefused(t *testing.T) {
	h := servertest.Start(t, server.Config{})
	owner := h.Owner(t)
	servertest.Call[any](t, owner, "create_stream", map[string]any{"id": "s-inbox", "name": "inbox"})
	deep := json.RawMessage(strings.Repeat("[", 1000) + strings.Repeat("]", 1000))
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": "publish", "arguments": map[string]any{"stream": "s-inbox", "body": "deep", "extra": map[string]any{"x": deep}}}})
	for _, version := range []string{"2025-11-25", "2024-11-05"} {
		t.Run(version, func(t *testing.T) {
			before, _ := h.Store.LastSeq(t.Context())
			req, _ := http.NewRequest(http.MethodPost, h.URL("w-owner"), bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+h.OwnerToken)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Protocol-Version", version)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			want := `{"error":{"code":-32600,"message":"invalid request: request: is JSON nested more than 100 levels deep; the limit is 100"},"id":1,"jsonrpc":"2.0"}`
			if resp.StatusCode != 200 || strings.TrimSpace(string(raw)) != want {
				t.Errorf("answer %d %s, want 200 %s", resp.StatusCode, raw, want)
			}
			if after, _ := h.Store.LastSeq(t.Context()); after != before {
				t.Errorf("a refused call stored %d events", after-before)
			}
		})
	}
	t.Run("a notification", func(t *testing.T) {
		note := `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"x":` + string(deep) + `}}`
		req, _ := http.NewRequest(http.MethodPost, h.URL("w-owner"), strings.NewReader(note))
		req.Header.Set("Authorization", "Bearer "+h.OwnerToken)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if raw, _ := io.ReadAll(resp.Body); resp.StatusCode != 400 || !strings.Contains(string(raw), `"id":null`) || !strings.Contains(string(raw), "the limit is 100") {
			t.Errorf("answer %d %s, want a 400 naming the limit", resp.StatusCode, raw)
		}
	})
	servertest.Call[any](t, owner, "subscribe", map[string]any{"stream": "s-inbox"})
	servertest.Call[any](t, owner, "read_events", map[string]any{"streams": []string{"s-inbox"}})
}

// TestAuthenticatedCallOutlivesServerTimeouts: the http.Server's read and
// write timeouts are sized for strangers; a worker's long-poll runs past
// them because authentication extends its deadlines to CallTimeout.
func TestAuthenticatedCallOutlivesServerTimeouts(t *testing.T) {
	st := storetest.New(t)
	if _, err := st.Bootstrap(t.Context(), tools.Names()); err != nil {
		t.Fatal(err)
	}
	tok := servertest.Token(t, st, "w-owner")
	hs := httptest.NewUnstartedServer(server.New(st, server.Config{}))
	hs.Config.ReadTimeout, hs.Config.WriteTimeout = 300*time.Millisecond, 300*time.Millisecond
	hs.Start()
	t.Cleanup(hs.Close)
	cs, err := servertest.Dial(t, hs.URL+"/workers/w-owner/mcp", tok)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "read_events", Arguments: map[string]any{"streams": []string{domain.StreamOrg}, "since": 1 << 40, "wait": 1}})
	if err != nil || res.IsError {
		t.Fatalf("read_events(wait=1) under a 300ms write timeout: %v %s", err, servertest.Text(res))
	}
	if waited := time.Since(start); waited < time.Second {
		t.Errorf("read_events returned after %v, before its wait was over", waited)
	}
	// A stranger is still held to the server's timeouts: a request whose
	// body never finishes is answered and its connection closed at the
	// read timeout, not kept for CallTimeout.
	conn, err := net.Dial("tcp", hs.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /workers/w-owner/mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{", hs.Listener.Addr())
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	start = time.Now()
	answer, err := io.ReadAll(conn) // until the server closes the connection
	if err != nil {
		t.Fatalf("the server kept a stalled unauthenticated request open: %v", err)
	}
	t.Logf("stalled request closed after %v: %q", time.Since(start).Round(time.Millisecond), firstLine(answer))
}

func firstLine(b []byte) string { line, _, _ := strings.Cut(string(b), "\r\n"); return line }
