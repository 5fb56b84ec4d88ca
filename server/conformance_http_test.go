package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/helixml/helix-org/server"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
)

// meta26 is the _meta every 2026-07-28 request carries.
func meta26(version string) string {
	return `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + version + `","io.modelcontextprotocol/clientCapabilities":{}}`
}

// TestConformanceHTTP sends the protocol's edge cases as raw HTTP to a
// worker endpoint, so nothing an SDK does hides what the server answers;
// every answer that is JSON-RPC is decoded strictly.
func TestConformanceHTTP(t *testing.T) {
	h := servertest.Start(t, server.Config{})
	url := h.URL(store.OwnerWorker)
	v26 := map[string]string{"MCP-Protocol-Version": v20260728}
	cases := []struct {
		name, version, body string
		header              map[string]string
		wantStatus          int
		wantCode            int    // a JSON-RPC error code, or 0 for a result
		want                string // in the body
	}{
		{"stateless tools/list, no handshake", v20260728, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + meta26(v20260728) + `}}`,
			v26, 200, 0, `"cacheScope":"private"`},
		{"server/discover lists both versions", v20260728, `{"jsonrpc":"2.0","id":"d","method":"server/discover","params":{` + meta26(v20260728) + `}}`,
			v26, 200, 0, `"2025-11-25"`},
		{"stateless tools/call", v20260728, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{` + meta26(v20260728) + `,"name":"get_worker","arguments":{}}}`,
			map[string]string{"MCP-Protocol-Version": v20260728, "Mcp-Name": "get_worker"}, 200, 0, `"resultType":"complete"`},
		{"unsupported version", v20260728, `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{` + meta26("2099-01-01") + `}}`,
			map[string]string{"MCP-Protocol-Version": "2099-01-01"}, 400, -32022, `"supported"`},
		{"removed ping at 2026-07-28", v20260728, `{"jsonrpc":"2.0","id":4,"method":"ping","params":{` + meta26(v20260728) + `}}`,
			v26, 404, -32601, "ping"},
		{"initialize with an unknown version gets one the server speaks", v20251125,
			`{"jsonrpc":"2.0","id":5,"method":"initialize","params":{"protocolVersion":"1999-01-01","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`,
			nil, 200, 0, `"protocolVersion":"2025-11-25"`},
		{"legacy tools/list has no cache fields", v20251125, `{"jsonrpc":"2.0","id":6,"method":"tools/list"}`,
			map[string]string{"MCP-Protocol-Version": v20251125}, 200, 0, `"tools":[`},
		{"notification is accepted without an answer", v20251125, `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			map[string]string{"MCP-Protocol-Version": v20251125}, 202, 0, ""},
		{"malformed JSON", "", `{"jsonrpc":"2.0","id":7,`, nil, 400, -32700, "parse error"},
		{"not a JSON-RPC object", "", `"tools/list"`, nil, 400, -32600, "invalid request"},
		{"a batch is refused", "", `[{"jsonrpc":"2.0","id":8,"method":"tools/list"}]`, nil, 400, -32600, "batches"},
		{"DNS rebinding: a foreign Host", "", `{"jsonrpc":"2.0","id":9,"method":"tools/list"}`,
			map[string]string{"Host": "evil.example"}, 403, 0, "Host"},
		{"DNS rebinding: a foreign Origin", "", `{"jsonrpc":"2.0","id":10,"method":"tools/list"}`,
			map[string]string{"Origin": "http://evil.example"}, 403, 0, ""},
		{"no token", "", `{"jsonrpc":"2.0","id":11,"method":"tools/list"}`, map[string]string{"Authorization": ""}, 401, 0, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			x := post(t, url, h.OwnerToken, c.body, c.header)
			if x.status != c.wantStatus || !strings.Contains(string(x.respBody), c.want) {
				t.Fatalf("answer %d %s, want %d containing %q", x.status, x.respBody, c.wantStatus, c.want)
			}
			if c.wantCode != 0 {
				resp, err := decodeMessage(x.respBody)
				if err != nil || resp.Error == nil || resp.Error.Code != c.wantCode {
					t.Errorf("error = %+v (%v), want code %d", resp.Error, err, c.wantCode)
				}
			}
			if c.version == "" {
				return
			}
			req, err := decodeMessage(x.reqBody)
			if err != nil {
				t.Fatal(err)
			}
			if err := checkAnswer(c.version, req, x); err != nil {
				t.Error(err)
			}
			if c.version == v20251125 && bytes.Contains(x.respBody, []byte(`"ttlMs"`)) {
				t.Errorf("a %s answer carries ttlMs: %s", c.version, x.respBody)
			}
		})
	}
}

// TestConformanceSessions: the endpoint is stateless at every version — no
// Mcp-Session-Id is handed out, so any replica can answer any request — and
// it holds no stream open for a GET.
func TestConformanceSessions(t *testing.T) {
	h := servertest.Start(t, server.Config{})
	url := h.URL(store.OwnerWorker)
	x := post(t, url, h.OwnerToken, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, nil)
	if id := x.respHeader.Get("Mcp-Session-Id"); x.status != 200 || id != "" {
		t.Errorf("initialize: %d, session %q; want 200 and no session", x.status, id)
	}
	// A request that names a session the server never issued is answered
	// all the same: there is no session state to be missing.
	x = post(t, url, h.OwnerToken, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, map[string]string{"MCP-Protocol-Version": v20251125, "Mcp-Session-Id": "made-up"})
	if x.status != 200 {
		t.Errorf("tools/list with a made-up session: %d %s", x.status, x.respBody)
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer "+h.OwnerToken)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET = %d, want 405: a stateless endpoint has no standalone stream", resp.StatusCode)
	}
}

// post sends one raw JSON-RPC body as an MCP client would, with header
// overriding the defaults (an empty value removes one).
func post(t *testing.T, url, token, body string, header map[string]string) exchange {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	var m struct{ Method string }
	if json.Unmarshal([]byte(body), &m) == nil && m.Method != "" {
		req.Header.Set("Mcp-Method", m.Method)
	}
	for k, v := range header {
		switch {
		case k == "Host":
			req.Host = v
		case v == "":
			req.Header.Del(k)
		default:
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return exchange{method: req.Method, path: req.URL.Path, reqHeader: req.Header, reqBody: []byte(body), status: resp.StatusCode, respHeader: resp.Header, respBody: b}
}
