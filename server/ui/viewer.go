package ui

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/tools"
)

// viewer is the signed-in person behind a request: their worker, the
// tools they hold right now and what acting as them needs.
type viewer struct {
	Worker  domain.Worker
	Session store.Session
	// Role is the person's org role, asked with every request.
	Role domain.OrgRole
	// CSRF is this session's anti-forgery token, put in every form.
	CSRF    string
	granted []string
	env     *tools.Env
	// sessionID is the raw cookie value, kept only to sign out with.
	sessionID string
}

// Can reports whether the viewer holds a live grant for tool, so a page
// shows only the controls that would work.
// The org role has its say too: a viewer sees no form that changes anything.
func (v *viewer) Can(tool string) bool {
	return slices.Contains(v.granted, tool) && tools.RoleAllows(v.Role, tool)
}

// IsOwner reports whether the viewer is the organisation's owner.
func (v *viewer) IsOwner() bool { return v.Worker.ID == store.OwnerWorker }

// IsAdmin reports whether the viewer runs the org (settings and the like).
func (v *viewer) IsAdmin() bool { return v.Role == domain.RoleAdmin }

// csrfToken derives a session's anti-forgery token from its secret id:
// unguessable without the id, and nothing more to store.
func csrfToken(sessionID string) string {
	mac := hmac.New(sha256.New, []byte(sessionID))
	mac.Write([]byte("helix-org csrf"))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// checkCSRF compares the token a write carries, from the form or from the
// X-CSRF-Token header of a script's request, in constant time.
func (v *viewer) checkCSRF(r *http.Request) bool {
	got := r.Header.Get("X-CSRF-Token")
	if got == "" {
		got = r.PostFormValue("csrf")
	}
	return got != "" && hmac.Equal([]byte(got), []byte(v.CSRF))
}

// invoke runs a tool as the viewer through tools.Invoke — the same grant
// check, validation and handler as MCP — and decodes its output the way
// an MCP client receives it.
func invoke[T any](ctx context.Context, v *viewer, tool string, args any) (T, error) {
	var out T
	raw, err := json.Marshal(args)
	if err != nil {
		return out, fmt.Errorf("encode %s arguments: %w", tool, err)
	}
	res, err := tools.Invoke(ctx, v.env, v.granted, tool, raw)
	if err != nil {
		return out, err
	}
	b, err := json.Marshal(res)
	if err != nil {
		return out, fmt.Errorf("encode %s output: %w", tool, err)
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return out, fmt.Errorf("decode %s output: %w", tool, err)
	}
	return out, nil
}
