package oauth

import (
	"errors"
	"net/http"
	"strings"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// tokenAnswer is a successful token response (RFC 6749 §5.1).
type tokenAnswer struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int64  `json:"expires_in"`
	RefreshToken string `json:"refresh_token"`
}

// handleToken is the token endpoint: an authorization code (with its
// PKCE verifier) or a refresh token for a new access token. Clients are
// public, so client_id comes in the form; a Basic header's user name is
// taken too, for clients that send one with an empty secret.
func (h *Handler) handleToken(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
	if err := r.ParseForm(); err != nil {
		h.refuse(w, http.StatusBadRequest, "invalid_request", "the body must be an application/x-www-form-urlencoded form of at most 16 KiB: "+err.Error())
		return
	}
	f := r.PostForm
	client := f.Get("client_id")
	if user, _, ok := r.BasicAuth(); ok && client == "" {
		client = user
	}
	if client == "" {
		h.refuse(w, http.StatusUnauthorized, "invalid_client", "client_id is required (register at /oauth/register first)")
		return
	}
	var (
		out store.OAuthTokens
		err error
	)
	switch f.Get("grant_type") {
	case "authorization_code":
		if msg := missing(f.Get, "code", "redirect_uri", "code_verifier"); msg != "" {
			h.refuse(w, http.StatusBadRequest, "invalid_request", msg)
			return
		}
		if !validVerifier(f.Get("code_verifier")) {
			h.refuse(w, http.StatusBadRequest, "invalid_grant", "code_verifier must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~ (RFC 7636)")
			return
		}
		out, err = h.st.ExchangeOAuthCode(r.Context(), store.OAuthExchange{ClientID: client, Code: f.Get("code"), RedirectURI: f.Get("redirect_uri"),
			Verifier: f.Get("code_verifier"), Resource: f.Get("resource")})
	case "refresh_token":
		if msg := missing(f.Get, "refresh_token"); msg != "" {
			h.refuse(w, http.StatusBadRequest, "invalid_request", msg)
			return
		}
		out, err = h.st.RefreshOAuthToken(r.Context(), client, f.Get("refresh_token"), f.Get("resource"))
	default:
		h.refuse(w, http.StatusBadRequest, "unsupported_grant_type", "grant_type must be authorization_code or refresh_token, got "+quote(f.Get("grant_type")))
		return
	}
	if err != nil {
		h.refuseGrant(w, err)
		return
	}
	writeJSON(w, http.StatusOK, tokenAnswer{AccessToken: out.Access, TokenType: "Bearer", ExpiresIn: int64(out.ExpiresIn.Seconds()), RefreshToken: out.Refresh})
}

// handleRevoke ends a client's access at its request (RFC 7009): the
// grant of the access or refresh token it sends. It answers 200 for a
// token it does not know, as the RFC asks.
func (h *Handler) handleRevoke(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
	if err := r.ParseForm(); err != nil {
		h.refuse(w, http.StatusBadRequest, "invalid_request", "the body must be an application/x-www-form-urlencoded form of at most 16 KiB: "+err.Error())
		return
	}
	client := r.PostForm.Get("client_id")
	if user, _, ok := r.BasicAuth(); ok && client == "" {
		client = user
	}
	if msg := missing(r.PostForm.Get, "client_id", "token"); msg != "" {
		h.refuse(w, http.StatusBadRequest, "invalid_request", msg)
		return
	}
	if err := h.st.RevokeOAuthToken(r.Context(), client, r.PostForm.Get("token")); err != nil {
		h.refuseGrant(w, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
}

// refuseGrant answers a store error with its OAuth error code.
func (h *Handler) refuseGrant(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, store.ErrOAuthClient):
		h.refuse(w, http.StatusUnauthorized, "invalid_client", err.Error())
	case errors.Is(err, store.ErrOAuthTarget):
		h.refuse(w, http.StatusBadRequest, "invalid_target", err.Error())
	case errors.Is(err, store.ErrOAuthGrant):
		h.refuse(w, http.StatusBadRequest, "invalid_grant", err.Error())
	case errors.Is(err, domain.ErrForbidden), errors.Is(err, domain.ErrNotFound):
		// The worker was dismissed or removed since the consent.
		h.refuse(w, http.StatusBadRequest, "invalid_grant", err.Error())
	default:
		h.log.Error("token request", "err", err)
		writeJSON(w, http.StatusInternalServerError, oauthError{Error: "server_error", Description: "could not issue a token"})
	}
}

// missing names the first required form field that is empty.
func missing(get func(string) string, names ...string) string {
	for _, n := range names {
		if get(n) == "" {
			return n + " is required"
		}
	}
	return ""
}

// validVerifier checks RFC 7636 §4.1's form of a code verifier.
func validVerifier(v string) bool {
	if len(v) < 43 || len(v) > 128 {
		return false
	}
	for _, c := range v {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.ContainsRune("-._~", c)) {
			return false
		}
	}
	return true
}

func quote(s string) string {
	if s == "" {
		return "nothing"
	}
	if len(s) > 64 {
		s = s[:64] + "…"
	}
	return `"` + s + `"`
}
