// Package gatewaytest starts outside MCP servers for tests: real go-sdk
// servers on loopback, behind the credential checks real ones make.
package gatewaytest

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tracker is an outside server with an issue tracker's tools: get_ticket
// (read-only), close_ticket (destructive) and wait (which answers only
// when its call is cancelled: a hung server).
type Tracker struct {
	*httptest.Server
	mu    sync.Mutex
	auth  []string
	calls int
}

// Calls is how many tools/call requests reached it.
func (tr *Tracker) Calls() int {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.calls
}

// Auths are the Authorization headers its requests carried.
func (tr *Tracker) Auths() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return append([]string(nil), tr.auth...)
}

// URL is its Streamable HTTP endpoint.
func (tr *Tracker) URL() string { return tr.Server.URL + "/mcp" }

// Ticket is what get_ticket answers for ticket 7.
const Ticket = "ticket 7: the printer is on fire"

// StartTracker serves a Tracker that answers only requests carrying
// Authorization: Bearer <token> for which valid says yes.
func StartTracker(t testing.TB, valid func(token string) bool) *Tracker {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "tracker", Version: "1"}, nil)
	type ticketIn struct {
		ID int `json:"id" jsonschema:"the ticket's number"`
	}
	type ticketOut struct {
		Text string `json:"text"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "get_ticket", Description: "Read a ticket.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, in ticketIn) (*mcp.CallToolResult, ticketOut, error) {
			if in.ID != 7 {
				return nil, ticketOut{}, errNoTicket
			}
			return nil, ticketOut{Text: Ticket}, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "close_ticket", Description: "Close a ticket for good.", Annotations: &mcp.ToolAnnotations{DestructiveHint: new(true)}},
		func(_ context.Context, _ *mcp.CallToolRequest, in ticketIn) (*mcp.CallToolResult, ticketOut, error) {
			return nil, ticketOut{Text: "closed"}, nil
		})
	// A hung call ends when the test does, so the server can close.
	release := make(chan struct{})
	mcp.AddTool(srv, &mcp.Tool{Name: "wait", Description: "Wait for something that never comes.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, ticketOut, error) {
			select {
			case <-ctx.Done():
				return nil, ticketOut{}, ctx.Err()
			case <-release:
				return nil, ticketOut{}, errHung
			}
		})
	tr := &Tracker{}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{JSONResponse: true})
	tr.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := r.Header.Get("Authorization")
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		tr.mu.Lock()
		tr.auth = append(tr.auth, got)
		if bytes.Contains(body, []byte(`"tools/call"`)) {
			tr.calls++
		}
		tr.mu.Unlock()
		tok, ok := strings.CutPrefix(got, "Bearer ")
		if !ok || !valid(tok) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="tracker"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(tr.Close)
	t.Cleanup(func() { close(release) })
	return tr
}

type ticketError string

func (e ticketError) Error() string { return string(e) }

const (
	errNoTicket = ticketError("no such ticket")
	errHung     = ticketError("hung until the test ended")
)

// Is returns a check that accepts exactly token.
func Is(token string) func(string) bool { return func(got string) bool { return got == token } }
