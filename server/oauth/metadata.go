package oauth

import (
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/helixml/helix-org/server/ui"
)

// handleResource is the protected resource metadata of one worker's
// endpoint (RFC 9728), at the path the 401's challenge names.
func (h *Handler) handleResource(w http.ResponseWriter, r *http.Request) {
	base := ui.BaseURL(h.st, r)
	id := r.PathValue("id")
	writeJSON(w, http.StatusOK, oauthex.ProtectedResourceMetadata{
		Resource:               Resource(base, id),
		AuthorizationServers:   []string{base},
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "helix-org: worker " + id,
	})
}

// handleResourceRoot is the metadata of the server as a whole: a client
// that asks for it gets a token for the worker of the person who
// consents.
func (h *Handler) handleResourceRoot(w http.ResponseWriter, r *http.Request) {
	base := ui.BaseURL(h.st, r)
	writeJSON(w, http.StatusOK, oauthex.ProtectedResourceMetadata{
		Resource:               base,
		AuthorizationServers:   []string{base},
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "helix-org",
	})
}

// authServerMeta is RFC 8414's document, only the fields this server
// states (the go-sdk's type would send an empty jwks_uri).
type authServerMeta struct {
	Issuer                string   `json:"issuer"`
	AuthorizationEndpoint string   `json:"authorization_endpoint"`
	TokenEndpoint         string   `json:"token_endpoint"`
	RegistrationEndpoint  string   `json:"registration_endpoint"`
	RevocationEndpoint    string   `json:"revocation_endpoint"`
	RevocationAuth        []string `json:"revocation_endpoint_auth_methods_supported"`
	ResponseTypes         []string `json:"response_types_supported"`
	GrantTypes            []string `json:"grant_types_supported"`
	TokenEndpointAuth     []string `json:"token_endpoint_auth_methods_supported"`
	CodeChallengeMethods  []string `json:"code_challenge_methods_supported"`
	IssParameterSupported bool     `json:"authorization_response_iss_parameter_supported"`
	ServiceDocumentation  string   `json:"service_documentation,omitempty"`
}

// handleAuthServer is the authorization server metadata (RFC 8414):
// public clients only, authorization code with PKCE S256, refresh
// tokens, and the issuer in every authorization response (RFC 9207).
func (h *Handler) handleAuthServer(w http.ResponseWriter, r *http.Request) {
	h.writeAuthServer(w, ui.BaseURL(h.st, r))
}

// handleAuthServerAt answers RFC 8414's path-insertion form for an issuer
// with a path — an org mounted at /orgs/acme has its metadata at
// /.well-known/oauth-authorization-server/orgs/acme, outside its own
// mount, where the server at the root receives it. What it says is built
// from URLs alone, so the root can say it for the issuer the path names.
func (h *Handler) handleAuthServerAt(w http.ResponseWriter, r *http.Request) {
	h.writeAuthServer(w, ui.BaseURL(h.st, r)+"/"+strings.Trim(r.PathValue("issuer"), "/"))
}

func (h *Handler) writeAuthServer(w http.ResponseWriter, base string) {
	writeJSON(w, http.StatusOK, authServerMeta{
		Issuer:                base,
		AuthorizationEndpoint: base + AuthorizePath,
		TokenEndpoint:         base + "/oauth/token",
		RegistrationEndpoint:  base + "/oauth/register",
		RevocationEndpoint:    base + "/oauth/revoke",
		RevocationAuth:        []string{"none"},
		ResponseTypes:         []string{"code"},
		GrantTypes:            []string{"authorization_code", "refresh_token"},
		TokenEndpointAuth:     []string{"none"},
		CodeChallengeMethods:  []string{"S256"},
		IssParameterSupported: true,
	})
}
