// Package oauth makes the server an OAuth 2.1 authorization server for
// MCP clients, as the MCP authorization spec (2025-11-25) describes:
// protected resource metadata (RFC 9728) for each worker's endpoint,
// authorization server metadata (RFC 8414), dynamic client registration
// (RFC 7591), the token endpoint (authorization code with PKCE S256,
// refresh tokens rotated, tokens bound to one worker's endpoint per
// RFC 8707) and revocation (RFC 7009). The consent page is the web UI's (server/ui authorize.go),
// behind its sign-in; the tokens and codes are the store's.
//
// Every URL it answers with is built from the request (ui.BaseURL), so
// the handler set works wherever it is mounted. It never decides who may
// act as whom: the store and the consent page do.
package oauth

import (
	"encoding/json"
	"log/slog"
	"net/http"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server/ui"
	"github.com/helixml/helix-org/store"
)

// AuthorizePath is the consent page's path under an org's base URL.
const AuthorizePath = "/ui/oauth/authorize"

// maxBodyBytes bounds a registration or token request.
const maxBodyBytes = 16 << 10

// Handler serves the authorization server's endpoints of one org.
type Handler struct {
	st  *store.Store
	log *slog.Logger
}

// New builds the handler set over an org's store.
func New(st *store.Store, log *slog.Logger) *Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Handler{st: st, log: log.With("component", "oauth")}
}

// Routes are the handler set's routes, relative to the org's mount: the
// server mounts them all, in one place.
func (h *Handler) Routes() map[string]http.Handler {
	return map[string]http.Handler{
		"GET /.well-known/oauth-protected-resource":                  http.HandlerFunc(h.handleResourceRoot),
		"GET /.well-known/oauth-protected-resource/workers/{id}/mcp": http.HandlerFunc(h.handleResource),
		"GET /.well-known/oauth-authorization-server":                http.HandlerFunc(h.handleAuthServer),
		"GET /.well-known/oauth-authorization-server/{issuer...}":    http.HandlerFunc(h.handleAuthServerAt),
		"POST /oauth/register":                                       http.HandlerFunc(h.handleRegister),
		"POST /oauth/token":                                          http.HandlerFunc(h.handleToken),
		"POST /oauth/revoke":                                         http.HandlerFunc(h.handleRevoke),
	}
}

// Challenge is the WWW-Authenticate of a 401 from a worker's endpoint:
// where its protected resource metadata is (RFC 9728 §5.1), and the
// error when a token was sent but is no good.
func (h *Handler) Challenge(r *http.Request, worker, errCode string) string {
	c := `Bearer realm="helix-org", resource_metadata="` + h.resourceMetadataURL(r, worker) + `"`
	if errCode != "" {
		c += `, error="` + errCode + `"`
	}
	return c
}

func (h *Handler) resourceMetadataURL(r *http.Request, worker string) string {
	return ui.BaseURL(h.st, r) + "/.well-known/oauth-protected-resource/workers/" + worker + "/mcp"
}

// Resource is the resource identifier of a worker's endpoint: its URL.
func Resource(base, worker string) string { return domain.MCPURL(base, worker) }

// writeJSON answers with a JSON body, never cached: token answers carry
// secrets, and metadata is cheap to fetch again.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// oauthError is the error body of RFC 6749 §5.2 and RFC 7591 §3.2.2.
type oauthError struct {
	Error       string `json:"error"`
	Description string `json:"error_description,omitempty"`
}

// refuse answers an OAuth error. The server's log already records every
// refusal with its answer as the reason, so it is not logged here too.
func (h *Handler) refuse(w http.ResponseWriter, status int, code, desc string) {
	writeJSON(w, status, oauthError{Error: code, Description: desc})
}
