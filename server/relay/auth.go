package relay

import (
	"errors"
	"net/http"
	"strings"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/transports/inbound"
)

// authenticate admits a request only with a live activation token, sent
// as Authorization: Bearer (OpenAI SDKs, ANTHROPIC_AUTH_TOKEN) or x-api-key
// (Anthropic SDKs, ANTHROPIC_API_KEY), and on the Gemini API as Google's
// SDKs send a key (geminiKey). Operator tokens are refused: they
// are long-lived and belong to people, and a model call must be charged to
// a run. The token's worker must not be dismissed.
func (rl *Relay) authenticate(w http.ResponseWriter, r *http.Request, e endpoint) (store.TokenInfo, bool) {
	provider := e.format
	tok := bearer(r)
	if tok == "" {
		tok = strings.TrimSpace(r.Header.Get("x-api-key"))
	}
	if tok == "" && e.provider == domain.RelayGemini {
		tok = geminiKey(r)
	}
	if tok == "" {
		fail(w, provider, http.StatusUnauthorized, "missing token: send the run's token (HELIX_ORG_TOKEN) as the API key")
		return store.TokenInfo{}, false
	}
	info, err := rl.cfg.Store.VerifyToken(r.Context(), tok)
	if errors.Is(err, store.ErrBadToken) {
		fail(w, provider, http.StatusUnauthorized, "invalid or expired token: the relay takes the token of a running activation")
		return store.TokenInfo{}, false
	}
	if err != nil {
		rl.internal(w, provider, err)
		return store.TokenInfo{}, false
	}
	if info.Kind != store.TokenActivation {
		fail(w, provider, http.StatusUnauthorized, "the relay takes only an activation's own token ("+store.ActivationTokenPrefix+"…), not an operator token")
		return store.TokenInfo{}, false
	}
	wk, err := rl.cfg.Store.GetWorker(r.Context(), info.WorkerID)
	if err != nil {
		rl.internal(w, provider, err)
		return store.TokenInfo{}, false
	}
	if !wk.Active() {
		fail(w, provider, http.StatusForbidden, "worker "+wk.ID+" has been dismissed")
		return store.TokenInfo{}, false
	}
	return info, true
}

func bearer(r *http.Request) string {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return ""
	}
	return strings.TrimSpace(tok)
}

// internal answers a failure of ours with a 500, logged here once.
// A database that cannot take the call for now is a 503 that says why,
// with Retry-After, which client libraries retry.
func (rl *Relay) internal(w http.ResponseWriter, provider string, err error) {
	if cause, ok := inbound.Unavailable(w, err); ok {
		rl.log.Error("relay request failed", "err", err, "cause", cause)
		fail(w, provider, http.StatusServiceUnavailable, err.Error())
		return
	}
	rl.log.Error("relay request failed", "err", err)
	fail(w, provider, http.StatusInternalServerError, http.StatusText(http.StatusInternalServerError))
}
