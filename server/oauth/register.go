package oauth

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"unicode"

	"github.com/helixml/helix-org/store"
)

// Limits on what a client may register: registration is open to anyone.
const (
	maxRedirectURIs   = 10
	maxRedirectURILen = 2000
	maxClientNameLen  = 200
)

// registration is the part of RFC 7591's client metadata this server
// reads; other fields are accepted and ignored.
type registration struct {
	RedirectURIs            []string `json:"redirect_uris"`
	ClientName              string   `json:"client_name"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
}

// registered is the answer (RFC 7591 §3.2.1). Every client is public:
// PKCE, not a secret, proves the token request is the client's.
type registered struct {
	ClientID                string   `json:"client_id"`
	ClientIDIssuedAt        int64    `json:"client_id_issued_at"`
	ClientName              string   `json:"client_name"`
	RedirectURIs            []string `json:"redirect_uris"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
}

// handleRegister is dynamic client registration (RFC 7591).
func (h *Handler) handleRegister(w http.ResponseWriter, r *http.Request) {
	var reg registration
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err := dec.Decode(&reg); err != nil {
		h.refuse(w, http.StatusBadRequest, "invalid_client_metadata", fmt.Sprintf("the body must be one JSON object of client metadata, at most %d bytes: %v", maxBodyBytes, err))
		return
	}
	code, err := reg.check()
	if err != nil {
		h.refuse(w, http.StatusBadRequest, code, err.Error())
		return
	}
	c, err := h.st.RegisterOAuthClient(r.Context(), reg.ClientName, reg.RedirectURIs)
	if errors.Is(err, store.ErrTooManyClients) {
		w.Header().Set("Retry-After", "3600")
		h.refuse(w, http.StatusTooManyRequests, "temporarily_unavailable", store.ErrTooManyClients.Error())
		return
	}
	if err != nil {
		h.log.Error("register client", "err", err)
		writeJSON(w, http.StatusInternalServerError, oauthError{Error: "server_error", Description: "could not record the registration"})
		return
	}
	writeJSON(w, http.StatusCreated, registered{ClientID: c.ID, ClientIDIssuedAt: c.CreatedAt.Unix(), ClientName: c.Name, RedirectURIs: c.RedirectURIs,
		GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"}, TokenEndpointAuthMethod: "none"})
}

// check validates the metadata, naming the RFC 7591 error code of what
// is wrong, and fills in the client's name when it gave none.
func (reg *registration) check() (string, error) {
	if len(reg.RedirectURIs) == 0 || len(reg.RedirectURIs) > maxRedirectURIs {
		return "invalid_redirect_uri", fmt.Errorf("redirect_uris must list 1 to %d URIs, got %d", maxRedirectURIs, len(reg.RedirectURIs))
	}
	for i, u := range reg.RedirectURIs {
		if err := checkRedirectURI(u); err != nil {
			return "invalid_redirect_uri", fmt.Errorf("redirect_uris[%d]: %w", i, err)
		}
	}
	for _, g := range reg.GrantTypes {
		if g != "authorization_code" && g != "refresh_token" {
			return "invalid_client_metadata", fmt.Errorf("grant_types: %q is not supported; valid: authorization_code, refresh_token", g)
		}
	}
	for _, t := range reg.ResponseTypes {
		if t != "code" {
			return "invalid_client_metadata", fmt.Errorf("response_types: %q is not supported; valid: code", t)
		}
	}
	reg.ClientName = strings.TrimSpace(reg.ClientName)
	switch {
	case len(reg.ClientName) > maxClientNameLen:
		return "invalid_client_metadata", fmt.Errorf("client_name is %d bytes; at most %d", len(reg.ClientName), maxClientNameLen)
	case strings.ContainsFunc(reg.ClientName, unicode.IsControl):
		return "invalid_client_metadata", errors.New("client_name holds control characters")
	case reg.ClientName == "":
		reg.ClientName = "unnamed MCP client"
	}
	return "", nil
}

// checkRedirectURI allows https, and http only to this machine (a native
// client's loopback listener, RFC 8252 §7.3); never a fragment.
func checkRedirectURI(raw string) error {
	if len(raw) > maxRedirectURILen {
		return fmt.Errorf("%d bytes; at most %d", len(raw), maxRedirectURILen)
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return fmt.Errorf("%q is not a URL: %w", raw, err)
	case u.Host == "" || u.User != nil:
		return fmt.Errorf("%q must be an absolute URL with a host and no user info", raw)
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return fmt.Errorf("%q must not have a fragment", raw)
	case strings.ContainsFunc(raw, unicode.IsControl):
		return errors.New("holds control characters")
	case u.Scheme == "https":
		return nil
	case u.Scheme == "http" && loopback(u.Hostname()):
		return nil
	}
	return fmt.Errorf("%q must use https, or http to a loopback address (127.0.0.1, [::1], localhost)", raw)
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
