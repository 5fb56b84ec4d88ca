package server

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server/oauth"
	"github.com/helixml/helix-org/server/ui"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/tools"
)

type callerKey struct{}

// authenticate lets a request through only with a live bearer token of the
// worker named in the path. Tokens in the query string are ignored: they
// leak into logs and browser history. We keep our own middleware rather
// than the SDK's RequireBearerToken because we need 403 for "valid token,
// wrong or dismissed worker" and a WWW-Authenticate header on every 401.
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		tok, ok := bearer(r)
		if !ok {
			unauthorized(w, s.oauth.Challenge(r, id, ""), "missing bearer token")
			return
		}
		// Grants and skills are read here, once per request (the SDK asks
		// for the server twice), where a store failure can still be a 500.
		b, err := s.store.Authenticate(r.Context(), tok)
		switch {
		case errors.Is(err, store.ErrBadToken):
			unauthorized(w, s.oauth.Challenge(r, id, "invalid_token"), "invalid or expired token")
			return
		case err != nil:
			writeError(w, s.log, err)
			return
		case b.Token.WorkerID != id && b.Token.Kind == store.TokenOAuth:
			// RFC 8707: the token's audience is one worker's endpoint.
			http.Error(w, "forbidden: this token belongs to another worker: it was issued for the endpoint of "+b.Token.WorkerID+
				" ("+oauth.Resource(ui.BaseURL(s.store, r), b.Token.WorkerID)+"), not this one", http.StatusForbidden)
			return
		case b.Token.WorkerID != id:
			http.Error(w, "forbidden: this token belongs to another worker", http.StatusForbidden)
			return
		case !b.Worker.Active():
			http.Error(w, "forbidden: worker "+id+" has been dismissed", http.StatusForbidden)
			return
		}
		extendDeadlines(w, s.cfg.CallTimeout)
		c := &caller{worker: id, activation: b.Token.ActivationID, granted: b.Tools, held: b.Held, skills: b.Skills, outside: b.Outside,
			epochs: b.Epochs, limitsOf: func() tools.Limits { return s.toolLimits(r) }}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), callerKey{}, c)))
	})
}

// verify checks the request's bearer token, answering 401 (with a
// challenge) or 500 itself when it does not hold.
func (s *Server) verify(w http.ResponseWriter, r *http.Request) (store.TokenInfo, bool) {
	tok, ok := bearer(r)
	if !ok {
		unauthorized(w, `Bearer realm="helix-org"`, "missing bearer token")
		return store.TokenInfo{}, false
	}
	info, err := s.store.VerifyToken(r.Context(), tok)
	if errors.Is(err, store.ErrBadToken) {
		unauthorized(w, `Bearer realm="helix-org", error="invalid_token"`, "invalid or expired token")
		return store.TokenInfo{}, false
	}
	if err != nil {
		writeError(w, s.log, err)
		return store.TokenInfo{}, false
	}
	return info, true
}

// caller is the authenticated identity of a request with what its MCP
// server is built from: its live grants and the skills there are.
type caller struct {
	worker     string
	activation string
	granted    []string
	held       []string // of granted, those whose calls wait for approval
	skills     []domain.Skill
	outside    []domain.OutsideTool
	// epochs are the store's cache epochs as authenticating read them,
	// which a call that changes nothing reads its caches at (serveCalls).
	epochs store.Epochs
	// limits bound what its tools/list shows (tools.Catalog), read by
	// readLimits where a list is answered: a call needs none, and reading
	// them costs two settings.
	limits   tools.Limits
	limitsOf func() tools.Limits
}

// readLimits reads the caller's limits; catalogKey needs them read.
func (c *caller) readLimits() {
	if c.limitsOf != nil {
		c.limits, c.limitsOf = c.limitsOf(), nil
	}
}

func callerFrom(ctx context.Context) *caller {
	c, _ := ctx.Value(callerKey{}).(*caller)
	return c
}

func bearer(r *http.Request) (string, bool) {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "bearer") || strings.TrimSpace(tok) == "" {
		return "", false
	}
	return strings.TrimSpace(tok), true
}

func unauthorized(w http.ResponseWriter, challenge, msg string) {
	w.Header().Set("WWW-Authenticate", challenge)
	http.Error(w, "unauthorized: "+msg, http.StatusUnauthorized)
}
