package gateway_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/gateway"
	"github.com/helixml/helix-org/gateway/gatewaytest"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

// TestMain runs the test binary as a small stdio MCP server when asked:
// the stdio tests' outside server.
func TestMain(m *testing.M) {
	if os.Getenv("GATEWAY_FAKE_STDIO") == "1" {
		fakeStdio()
		return
	}
	os.Exit(m.Run())
}

// fakeStdio serves echo (answers its text and whether it sees a token in
// its environment) and die (exits mid-call).
func fakeStdio() {
	srv := mcp.NewServer(&mcp.Implementation{Name: "fake", Version: "1"}, nil)
	type in struct {
		Text string `json:"text" jsonschema:"what to echo"`
	}
	type out struct {
		Echo  string `json:"echo"`
		Token string `json:"token"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "Echo."}, func(_ context.Context, _ *mcp.CallToolRequest, i in) (*mcp.CallToolResult, out, error) {
		return nil, out{Echo: i.Text, Token: os.Getenv("FAKE_TOKEN")}, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "die", Description: "Exit."}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, out, error) {
		os.Exit(3)
		return nil, out{}, nil
	})
	srv.Run(context.Background(), &mcp.StdioTransport{})
}

func newGateway(t *testing.T, st *store.Store, sandbox *agent.Bwrap) *gateway.Gateway {
	t.Helper()
	g := gateway.New(st, gateway.Options{AllowPrivate: func(context.Context) bool { return true }, Sandbox: func() *agent.Bwrap { return sandbox }, Unsandboxed: sandbox == nil, Dir: t.TempDir()})
	t.Cleanup(g.Close)
	return g
}

func newStore(t *testing.T) *store.Store {
	t.Helper()
	st := storetest.New(t)
	if _, err := st.Bootstrap(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	return st
}

// sandbox is the host-agent sandbox; stdio servers run in it.
func sandbox(t *testing.T) *agent.Bwrap {
	t.Helper()
	check := agent.CheckSandbox(t.Context(), "")
	if check.Err != nil {
		t.Fatalf("bubblewrap cannot run here (%v): install bubblewrap", check.Err)
	}
	return &agent.Bwrap{Path: check.Bwrap}
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestOAuthClientCredential: the broker exchanges client credentials at a
// token endpoint once, and every call carries the token it got.
func TestOAuthClientCredential(t *testing.T) {
	var exchanges atomic.Int32
	tokens := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, secret, ok := r.BasicAuth()
		if r.Method != http.MethodPost || r.FormValue("grant_type") != "client_credentials" || !ok || id != "helix" || secret != "s3cret" || r.FormValue("scope") != "tickets:read" {
			http.Error(w, `{"error":"invalid_client"}`, http.StatusUnauthorized)
			return
		}
		exchanges.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"access_token":"oauth-access-1","token_type":"bearer","expires_in":3600}`))
	}))
	t.Cleanup(tokens.Close)
	tr := gatewaytest.StartTracker(t, gatewaytest.Is("oauth-access-1"))
	st := newStore(t)
	g := newGateway(t, st, nil)
	ctx := t.Context()
	auth := &domain.MCPAuth{Type: domain.AuthOAuthClient, TokenURL: tokens.URL, ClientID: "helix", ClientSecret: "s3cret", Scopes: []string{"tickets:read"}}
	if _, err := st.AddMCPServer(ctx, "w-owner", domain.MCPServer{Name: "tracker", Transport: domain.MCPHTTP, URL: tr.URL()}, auth); err != nil {
		t.Fatal(err)
	}
	srv, err := g.Refresh(ctx, "tracker")
	if err != nil || !srv.Healthy || len(srv.Tools) != 3 {
		t.Fatalf("Refresh = %+v, %v; want healthy with 3 tools", srv, err)
	}
	for range 2 {
		res, err := g.Call(ctx, "tracker", "get_ticket", json.RawMessage(`{"id":7}`))
		if err != nil || res.IsError || !strings.Contains(text(res), gatewaytest.Ticket) {
			t.Fatalf("Call = %v, %v; want the ticket", res, err)
		}
	}
	if n := exchanges.Load(); n != 1 {
		t.Errorf("token endpoint exchanged %d times; want once, the token kept", n)
	}
	for _, a := range tr.Auths() {
		if a != "Bearer oauth-access-1" {
			t.Errorf("tracker saw Authorization %q", a)
		}
	}
}

// TestOAuthClientRefused: a refused exchange leaves the server unhealthy
// with why, and no secret in it.
func TestOAuthClientRefused(t *testing.T) {
	tokens := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":"invalid_client"}`, http.StatusUnauthorized)
	}))
	t.Cleanup(tokens.Close)
	tr := gatewaytest.StartTracker(t, gatewaytest.Is("never"))
	st := newStore(t)
	g := newGateway(t, st, nil)
	auth := &domain.MCPAuth{Type: domain.AuthOAuthClient, TokenURL: tokens.URL, ClientID: "helix", ClientSecret: "s3cret-value"}
	if _, err := st.AddMCPServer(t.Context(), "w-owner", domain.MCPServer{Name: "tracker", Transport: domain.MCPHTTP, URL: tr.URL()}, auth); err != nil {
		t.Fatal(err)
	}
	srv, err := g.Refresh(t.Context(), "tracker")
	if err == nil || srv.Healthy || !strings.Contains(srv.Error, "invalid_client") || strings.Contains(srv.Error, "s3cret-value") {
		t.Errorf("Refresh = %+v, %v; want unhealthy, saying invalid_client, without the secret", srv, err)
	}
}

// TestStdioServerRestarts: a stdio server runs in the sandbox with its
// token in its environment; when it dies mid-call the call fails and the
// next one runs in a new process.
func TestStdioServerRestarts(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	st := newStore(t)
	g := newGateway(t, st, sandbox(t))
	ctx := t.Context()
	srv := domain.MCPServer{Name: "fake", Transport: domain.MCPStdio, Command: exe, Env: map[string]string{"GATEWAY_FAKE_STDIO": "1"}}
	if _, err := st.AddMCPServer(ctx, "w-owner", srv, &domain.MCPAuth{Type: domain.AuthBearer, Token: "stdio-token", Env: "FAKE_TOKEN"}); err != nil {
		t.Fatal(err)
	}
	if got, err := g.Refresh(ctx, "fake"); err != nil || len(got.Tools) != 2 {
		t.Fatalf("Refresh = %+v, %v; want 2 tools", got, err)
	}
	echo := func() string {
		t.Helper()
		res, err := g.Call(ctx, "fake", "echo", json.RawMessage(`{"text":"hi"}`))
		if err != nil || res.IsError {
			t.Fatalf("echo: %v, %v", res, err)
		}
		return text(res)
	}
	if got := echo(); !strings.Contains(got, `"echo":"hi"`) || !strings.Contains(got, `"token":"stdio-token"`) {
		t.Errorf("echo = %s; want hi and the token from its environment", got)
	}
	if _, err := g.Call(ctx, "fake", "die", nil); err == nil {
		t.Fatal("die: want an error")
	}
	if s, _ := st.GetMCPServer(ctx, "fake"); s.Healthy {
		t.Error("server still healthy after its process died")
	}
	if got := echo(); !strings.Contains(got, `"echo":"hi"`) {
		t.Errorf("echo after a restart = %s", got)
	}
	if s, _ := st.GetMCPServer(ctx, "fake"); !s.Healthy {
		t.Errorf("server unhealthy after a restart: %s", s.Error)
	}
}
