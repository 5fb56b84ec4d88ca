// Package servertest starts a real helix-org server on loopback over a real
// SQLite file, and connects real MCP clients to it, for end-to-end tests.
package servertest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
	"github.com/helixml/helix-org/tools"
	"github.com/helixml/helix-org/transports/email"
	"github.com/helixml/helix-org/transports/github"
	"github.com/helixml/helix-org/transports/schedule"
	"github.com/helixml/helix-org/transports/transport"
	"github.com/helixml/helix-org/transports/webhook"
)

// Harness is a running server with a bootstrapped owner.
type Harness struct {
	Store      *store.Store
	Server     *httptest.Server
	OwnerToken string
}

// Transports are the transport kinds of a test server's store: the
// binary's own, so tests see their real config checks and errors.
var Transports = transport.List{webhook.Transport, email.Transport, github.Transport, schedule.Transport}.Specs()

// Start boots a server on 127.0.0.1 with the owner created.
func Start(t testing.TB, cfg server.Config) *Harness {
	t.Helper()
	st := storetest.NewWith(t, store.Options{Transports: Transports})
	return StartWith(t, st, cfg)
}

// StartWith boots a server over an existing store.
func StartWith(t testing.TB, st *store.Store, cfg server.Config) *Harness {
	t.Helper()
	if _, err := st.Bootstrap(t.Context(), tools.Names()); err != nil {
		t.Fatalf("bootstrap: %v", err)
	}
	tok := Token(t, st, store.OwnerWorker)
	hs := httptest.NewServer(server.New(st, cfg))
	t.Cleanup(hs.Close)
	return &Harness{Store: st, Server: hs, OwnerToken: tok}
}

// Token mints an operator token for a worker.
func Token(t testing.TB, st *store.Store, worker string) string {
	t.Helper()
	tok, err := st.CreateToken(t.Context(), store.TokenSpec{WorkerID: worker, Kind: store.TokenOperator})
	if err != nil {
		t.Fatalf("token for %s: %v", worker, err)
	}
	return tok
}

// URL is the MCP endpoint of a worker.
func (h *Harness) URL(worker string) string { return domain.MCPURL(h.Server.URL, worker) }

// Owner connects as w-owner.
func (h *Harness) Owner(t testing.TB) *mcp.ClientSession {
	return h.Connect(t, store.OwnerWorker, h.OwnerToken)
}

// Connect opens a go-sdk client session to a worker's endpoint with a token.
func (h *Harness) Connect(t testing.TB, worker, token string) *mcp.ClientSession {
	t.Helper()
	cs, err := Dial(t, h.URL(worker), token)
	if err != nil {
		t.Fatalf("connect as %s: %v", worker, err)
	}
	return cs
}

// Dial connects a go-sdk client to url with a bearer token.
func Dial(t testing.TB, url, token string) (*mcp.ClientSession, error) {
	return DialHeader(t, url, token, nil)
}

// DialHeader is Dial sending header with every request too.
func DialHeader(t testing.TB, url, token string, header http.Header) (*mcp.ClientSession, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "servertest", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{
		Endpoint:   url,
		HTTPClient: &http.Client{Transport: BearerTransport{Token: token, Header: header}},
	}, nil)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { cs.Close() })
	return cs, nil
}

// BearerTransport adds an Authorization header, and Header, to every
// request.
type BearerTransport struct {
	Token  string
	Header http.Header
	Base   http.RoundTripper
}

func (b BearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range b.Header {
		r.Header[k] = v
	}
	r.Header.Set("Authorization", "Bearer "+b.Token)
	base := b.Base
	if base == nil {
		base = http.DefaultTransport
	}
	return base.RoundTrip(r)
}

// Call calls a tool that must succeed and decodes its structured output.
func Call[T any](t testing.TB, cs *mcp.ClientSession, name string, args map[string]any) T {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error: %v", name, err)
	}
	if res.IsError {
		t.Fatalf("%s(%v): tool error: %s", name, args, Text(res))
	}
	var out T
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s: decode %s: %v", name, raw, err)
	}
	return out
}

// CallErr calls a tool that must fail and returns the error text the
// caller sees, whether a tool error or a protocol error.
func CallErr(t testing.TB, cs *mcp.ClientSession, name string, args map[string]any) string {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return err.Error()
	}
	if !res.IsError {
		t.Fatalf("%s(%v): want an error, got %s", name, args, Text(res))
	}
	return Text(res)
}

// Text joins a result's text content.
func Text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// ToolNames lists the tools a session sees.
func ToolNames(t testing.TB, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names
}
