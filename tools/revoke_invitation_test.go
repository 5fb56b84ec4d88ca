package tools

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// TestRevokeInvitation is a table of its own: each case's id is the one
// its fixture's invitation got.
func TestRevokeInvitation(t *testing.T) {
	type out struct {
		Worker string `json:"worker"`
		Status string `json:"status"`
	}
	tests := []struct {
		name    string
		caller  string
		id      string // "" is the invitation's own
		accept  bool
		want    out
		wantErr string
		wantIs  error
	}{
		{name: "revokes and dismisses the pending worker", want: out{Worker: "w-lee", Status: "revoked"}},
		{name: "accepted is a person now", accept: true, wantIs: domain.ErrConflict, wantErr: "dismiss_worker removes them"},
		{name: "a member may not", caller: "w-maya", wantIs: domain.ErrForbidden, wantErr: "member may not revoke invitations"},
		{name: "unknown", id: "inv-nope", wantIs: domain.ErrNotFound, wantErr: `invitation "inv-nope"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			ctx := t.Context()
			inv, _, err := f.env.Store.Invite(ctx, "w-owner", store.InviteSpec{Email: "lee@example.com", Position: "p-support", Role: domain.RoleMember, TTL: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			if tt.accept {
				must(t)(0, errOf(f.env.Store.SignInWithEmail(ctx, "lee@example.com", time.Hour)))
			}
			env := f.env
			if tt.caller != "" {
				env = f.as(tt.caller)
			}
			id := tt.id
			if id == "" {
				id = inv.ID
			}
			got, err := call[out](t, env, "revoke_invitation", map[string]any{"id": id})
			if tt.wantIs != nil {
				if !errors.Is(err, tt.wantIs) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %v containing %q", err, tt.wantIs, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("revoke_invitation = %+v, %v; want %+v", got, err, tt.want)
			}
			if w, _ := f.env.Store.GetWorker(ctx, "w-lee"); w.Active() {
				t.Error("w-lee is still active")
			}
			if _, _, err := f.env.Store.SignInWithEmail(ctx, "lee@example.com", time.Hour); !errors.Is(err, store.ErrInviteRevoked) {
				t.Errorf("sign-in after revoking: %v", err)
			}
		})
	}
	runTable(t, "revoke_invitation", []toolCase[out]{
		{name: "missing id", args: map[string]any{}, wantErr: []string{"id: is required"}},
	})
}

// errOf keeps the error of a call that returns three values.
func errOf[A, B any](_ A, _ B, err error) error { return err }
