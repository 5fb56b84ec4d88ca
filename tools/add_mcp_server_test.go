package tools

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/gateway"
	"github.com/helixml/helix-org/gateway/gatewaytest"
)

const trackerToken = "tracker-secret-token"

// withGateway gives the fixture a real gateway, allowed onto loopback.
func withGateway(t *testing.T, f fixture) {
	t.Helper()
	g := gateway.New(f.env.Store, gateway.Options{AllowPrivate: func(context.Context) bool { return true }, Unsandboxed: true, Dir: t.TempDir()})
	t.Cleanup(g.Close)
	f.env.Outside = g
}

// withTracker attaches a tracker server as "tracker" with its token.
func withTracker(t *testing.T, f fixture) *gatewaytest.Tracker {
	t.Helper()
	withGateway(t, f)
	tr := gatewaytest.StartTracker(t, gatewaytest.Is(trackerToken))
	mustCall[any](t, f.env, "add_mcp_server", map[string]any{"name": "tracker", "url": tr.URL(), "auth": map[string]any{"type": "bearer", "token": trackerToken}})
	return tr
}

var trackerTools = []string{"tracker__close_ticket", "tracker__get_ticket", "tracker__wait"}

func TestAddMCPServer(t *testing.T) {
	tr := gatewaytest.StartTracker(t, gatewaytest.Is(trackerToken))
	bearer := map[string]any{"type": "bearer", "token": trackerToken}
	runTable(t, "add_mcp_server", []toolCase[mcpServerView]{
		{
			name:  "attaches a server, fetches its tools and gives the owner them all",
			setup: withGateway,
			args:  map[string]any{"name": "tracker", "url": tr.URL(), "auth": bearer},
			want: mcpServerView{Name: "tracker", Transport: "http", URL: tr.URL(), AuthType: "bearer", Healthy: true, Tools: 3,
				ToolNames: []string{"tracker__close_ticket", "tracker__get_ticket", "tracker__wait"}},
			check: func(t *testing.T, f fixture, _ mcpServerView) {
				held, _ := f.env.Store.LiveTools(t.Context(), domain.OwnerWorker)
				for _, n := range trackerTools {
					if !slices.Contains(held, n) {
						t.Errorf("owner does not hold %s", n)
					}
				}
			},
		},
		{
			name:  "a server that refuses the credential is kept, unhealthy, with why",
			setup: withGateway,
			args:  map[string]any{"name": "tracker", "url": tr.URL(), "auth": map[string]any{"type": "bearer", "token": "wrong"}},
			want:  mcpServerView{Name: "tracker", Transport: "http", URL: tr.URL(), AuthType: "bearer"},
			check: func(t *testing.T, f fixture, got mcpServerView) {
				if got.Healthy || got.Error == "" {
					t.Errorf("got %+v; want unhealthy with an error", got)
				}
			},
		},
		{name: "not the owner", setup: withGateway, caller: "w-maya", args: map[string]any{"name": "tracker", "url": tr.URL()},
			wantErr: []string{"add_mcp_server is the owner's"}, wantIs: domain.ErrForbidden},
		{name: "url and command", setup: withGateway, args: map[string]any{"name": "x", "url": tr.URL(), "command": "/bin/true"},
			wantErr: []string{"url: give url (Streamable HTTP) or command (stdio), not both"}, wantIs: domain.ErrInvalid},
		{name: "neither", setup: withGateway, args: map[string]any{"name": "x"}, wantErr: []string{"url: give url"}, wantIs: domain.ErrInvalid},
		{name: "a name with __", setup: withGateway, args: map[string]any{"name": "a__b", "url": tr.URL()}, wantErr: []string{"name:"}, wantIs: domain.ErrInvalid},
		{name: "a bad timeout", setup: withGateway, args: map[string]any{"name": "x", "url": tr.URL(), "timeout": "soon"}, wantErr: []string{"timeout:"}, wantIs: domain.ErrInvalid},
		{name: "a bearer without its token", setup: withGateway, args: map[string]any{"name": "x", "url": tr.URL(), "auth": map[string]any{"type": "bearer"}},
			wantErr: []string{"auth.token: is required"}, wantIs: domain.ErrInvalid},
		{name: "an unknown auth type", setup: withGateway, args: map[string]any{"name": "x", "url": tr.URL(), "auth": map[string]any{"type": "basic"}},
			wantErr: []string{"basic"}, wantIs: domain.ErrInvalid},
		{name: "the same name twice", setup: func(t *testing.T, f fixture) { withTracker(t, f) },
			args: map[string]any{"name": "tracker", "url": tr.URL()}, wantIs: domain.ErrConflict},
	}, cmpopts.IgnoreFields(mcpServerView{}, "Error"))
}
