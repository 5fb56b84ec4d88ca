package server_test

import (
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
	"github.com/helixml/helix-org/tools"
)

// TestDirectCallsAnswerAsTheSDK sends the same tools/call requests to two
// servers over one store: one that answers plain calls of built-in tools
// itself, and one that hands every call to the go-sdk. Each answer —
// status, headers and body — must be the same byte for byte (but for the
// ids and seq a write makes), and the calls the server should answer
// itself must be the ones it did.
func TestDirectCallsAnswerAsTheSDK(t *testing.T) {
	clock := storetest.NewClock(clockStart)
	st := storetest.NewWith(t, store.Options{Now: clock.Now, Transports: servertest.Transports})
	if _, err := st.Bootstrap(t.Context(), tools.Names()); err != nil {
		t.Fatal(err)
	}
	direct := server.New(st, server.Config{})
	viaSDK := server.New(st, server.Config{})
	viaSDK.ServeCallsViaSDK()
	hd, hs := httptest.NewServer(direct), httptest.NewServer(viaSDK)
	t.Cleanup(hd.Close)
	t.Cleanup(hs.Close)
	h := &servertest.Harness{Store: st, Server: hd, OwnerToken: servertest.Token(t, st, store.OwnerWorker)}
	owner := h.Owner(t)
	servertest.Call[domain.Stream](t, owner, "create_stream", map[string]any{"id": "s-news", "name": "news"})
	servertest.Call[any](t, owner, "create_role", map[string]any{"id": "r-staff", "title": "Staff", "content": "Work."})
	servertest.Call[any](t, owner, "create_position", map[string]any{"id": "p-staff", "role": "r-staff", "title": "Staff"})
	servertest.Call[any](t, owner, "hire_worker", map[string]any{"id": "w-maya", "position": "p-staff", "kind": "human", "name": "Maya",
		"grants": []string{"read_events", "publish"}})
	servertest.Call[any](t, owner, "grant_tool", map[string]any{"worker": "w-maya", "tool": "publish", "approval": "required"})
	mayaToken := servertest.Token(t, st, "w-maya")

	meta := func(v string) string { return meta26(v) + "," }
	calls := []struct {
		name, worker, version, id, tool, params string
		header                                  map[string]string
		direct                                  bool
		// legacyOnly: only before 2026-07-28 is it a plain call; at
		// 2026-07-28 the go-sdk checks what differs (its headers).
		legacyOnly bool
	}{
		{"a read", store.OwnerWorker, "", "1", "get_role", `"arguments":{"id":"r-staff"}`, nil, true, false},
		{"a list", store.OwnerWorker, "", "2", "list_workers", `"arguments":{}`, nil, true, false},
		{"no arguments", store.OwnerWorker, "", "3", "list_roles", ``, nil, true, false},
		{"null arguments", store.OwnerWorker, "", "4", "list_roles", `"arguments":null`, nil, true, false},
		{"a write", store.OwnerWorker, "", "5", "publish", `"arguments":{"stream":"s-news","body":"hello <b>&</b> \u00e9"}`, nil, true, false},
		{"markup in ASCII", store.OwnerWorker, "", "15", "publish", `"arguments":{"stream":"s-news","body":"a <b> && \"c\" \\ d"}`, nil, true, false},
		{"a string id", store.OwnerWorker, "", `"a\u0041"`, "get_worker", `"arguments":{}`, nil, true, false},
		{"not found", store.OwnerWorker, "", "6", "get_role", `"arguments":{"id":"r-none"}`, nil, true, false},
		{"a missing argument", store.OwnerWorker, "", "7", "publish", `"arguments":{"body":"x"}`, nil, true, false},
		{"an unknown argument", store.OwnerWorker, "", "8", "get_role", `"arguments":{"id":"r-staff","colour":"red"}`, nil, true, false},
		{"a wrong type", store.OwnerWorker, "", "9", "read_events", `"arguments":{"streams":["s-news"],"limit":"ten"}`, nil, true, false},
		{"arguments not an object", store.OwnerWorker, "", "10", "get_role", `"arguments":5`, nil, true, false},
		{"a reason on an ungated call", store.OwnerWorker, "", "11", "get_role", `"arguments":{"id":"r-staff","_reason":"checking"}`, nil, true, false},
		{"a missing grant", "w-maya", "", "12", "list_roles", `"arguments":{}`, nil, true, false},
		{"a held call", "w-maya", "", "13", "publish", `"arguments":{"stream":"s-news","body":"may I?","_reason":"news"}`, nil, true, false},
		{"a granted read", "w-maya", "", "14", "read_events", `"arguments":{"streams":["s-news"],"limit":5}`, nil, true, false},
		// What the go-sdk answers alone.
		{"a skill", store.OwnerWorker, "", "20", "skill_none", `"arguments":{}`, nil, false, false},
		{"an unknown tool", store.OwnerWorker, "", "21", "no_such_tool", `"arguments":{}`, nil, false, false},
		{"a progress token", store.OwnerWorker, "", "22", "get_worker", `"arguments":{},"_meta":{"progressToken":"p"}`, nil, false, false},
		{"a fractional id", store.OwnerWorker, "", "1.5", "get_worker", `"arguments":{}`, nil, false, false},
		{"a null id", store.OwnerWorker, "", "null", "get_worker", `"arguments":{}`, nil, false, false},
		{"an unknown version header", store.OwnerWorker, "2099-01-01", "23", "get_worker", `"arguments":{}`, nil, false, false},
		{"no version header", store.OwnerWorker, "-", "24", "get_worker", `"arguments":{}`, nil, false, false},
		{"an accept wildcard", store.OwnerWorker, "", "25", "get_worker", `"arguments":{}`, map[string]string{"Accept": "*/*"}, false, false},
		{"accept without SSE", store.OwnerWorker, "", "26", "get_worker", `"arguments":{}`, map[string]string{"Accept": "application/json"}, false, false},
		{"a foreign host", store.OwnerWorker, "", "27", "get_worker", `"arguments":{}`, map[string]string{"Host": "evil.example"}, false, false},
		{"a text body", store.OwnerWorker, "", "28", "get_worker", `"arguments":{}`, map[string]string{"Content-Type": "text/plain"}, false, false},
		{"a Last-Event-ID", store.OwnerWorker, "", "29", "get_worker", `"arguments":{}`, map[string]string{"Last-Event-ID": "1"}, false, false},
		{"a task", store.OwnerWorker, "", "30", "get_worker", `"arguments":{},"task":{"ttl":60000}`, nil, false, false},
		{"an Mcp-Name naming another tool", store.OwnerWorker, "", "31", "get_worker", `"arguments":{}`, map[string]string{"Mcp-Name": "list_roles"}, true, true},
		{"no Mcp-Method", store.OwnerWorker, "", "32", "get_worker", `"arguments":{}`, map[string]string{"Mcp-Method": ""}, true, true},
	}
	versions := []string{"2025-06-18", v20251125, v20260728}
	for _, c := range calls {
		for _, v := range versions {
			t.Run(c.name+"/"+v, func(t *testing.T) {
				version, header := v, map[string]string{"Mcp-Name": c.tool}
				switch c.version {
				case "-":
					version = ""
				case "":
				default:
					version = c.version
				}
				header["MCP-Protocol-Version"] = version
				for k, val := range c.header {
					header[k] = val
				}
				params := c.params
				if v == v20260728 && !strings.Contains(params, "_meta") {
					params = meta(v) + params
				}
				if params != "" && !strings.HasSuffix(params, ",") {
					params += ","
				}
				body := `{"jsonrpc":"2.0","id":` + c.id + `,"method":"tools/call","params":{` + params + `"name":"` + c.tool + `"}}`
				token := h.OwnerToken
				if c.worker != store.OwnerWorker {
					token = mayaToken
				}
				before := direct.DirectCalls()
				got := post(t, domain.MCPURL(hd.URL, c.worker), token, body, header)
				wantDirect := c.direct && !(c.legacyOnly && v == v20260728)
				if answered := direct.DirectCalls() - before; answered != map[bool]int64{true: 1}[wantDirect] {
					t.Errorf("answered directly %d times, want %v", answered, wantDirect)
				}
				want := post(t, domain.MCPURL(hs.URL, c.worker), token, body, header)
				if got.status != want.status {
					t.Errorf("status %d, the go-sdk's %d", got.status, want.status)
				}
				for _, k := range []string{"Content-Type", "Cache-Control", "Mcp-Session-Id"} {
					if got.respHeader.Get(k) != want.respHeader.Get(k) {
						t.Errorf("%s %q, the go-sdk's %q", k, got.respHeader.Get(k), want.respHeader.Get(k))
					}
				}
				if g, w := normalise(string(got.respBody)), normalise(string(want.respBody)); g != w {
					t.Errorf("answer\n%s\nthe go-sdk's\n%s", g, w)
				}
			})
		}
	}
}

// written are the parts of an answer a write makes anew each time.
var written = regexp.MustCompile(`\b(e-[a-z0-9]{16}|ap-[a-z0-9]{12}|task-[a-z0-9]{16})\b|\\?"seq\\?":\d+`)

func normalise(body string) string { return written.ReplaceAllString(body, "<new>") }

// TestModelsReadMarkupAsWritten: what a model reads of a tool's answer —
// its text, through a real MCP client, on the server's own path and the
// go-sdk's — has <, > and & as they were written, not as the \u003c a
// JSON encoder writes for HTML's sake (six characters for one, in every
// role, email and diff an agent reads).
func TestModelsReadMarkupAsWritten(t *testing.T) {
	const body, role = "Reply <b>R&D</b> -> done", "Answer `echo: <body>` && stop"
	for _, sdk := range []bool{false, true} {
		t.Run(map[bool]string{false: "direct", true: "go-sdk"}[sdk], func(t *testing.T) {
			st := storetest.New(t)
			if _, err := st.Bootstrap(t.Context(), tools.Names()); err != nil {
				t.Fatal(err)
			}
			srv := server.New(st, server.Config{})
			if sdk {
				srv.ServeCallsViaSDK()
			}
			hs := httptest.NewServer(srv)
			t.Cleanup(hs.Close)
			h := &servertest.Harness{Store: st, Server: hs, OwnerToken: servertest.Token(t, st, store.OwnerWorker)}
			owner := h.Owner(t)
			servertest.Call[any](t, owner, "create_stream", map[string]any{"id": "s-news", "name": "news"})
			servertest.Call[any](t, owner, "create_role", map[string]any{"id": "r-echo", "title": "Echo", "content": role})
			servertest.Call[any](t, owner, "publish", map[string]any{"stream": "s-news", "body": body})
			servertest.Call[any](t, owner, "subscribe", map[string]any{"stream": "s-news"})
			for _, c := range []struct {
				tool string
				args map[string]any
				want string
			}{
				{"read_events", map[string]any{"streams": []string{"s-news"}}, body},
				{"get_role", map[string]any{"id": "r-echo"}, "Answer `echo: <body>` && stop"},
			} {
				res, err := owner.CallTool(t.Context(), &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
				if err != nil || res.IsError {
					t.Fatalf("%s: %v %s", c.tool, err, servertest.Text(res))
				}
				if text := servertest.Text(res); !strings.Contains(text, c.want) || strings.Contains(text, `\u00`) {
					t.Errorf("%s's text = %s, want %q as written", c.tool, text, c.want)
				}
			}
		})
	}
}
