package store_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
	"github.com/helixml/helix-org/transports/email"
)

func TestInvitationSignIn(t *testing.T) {
	t.Parallel()
	ttl := 7 * 24 * time.Hour
	tests := []struct {
		name string
		// before runs between the invitation and the sign-in.
		before     func(t *testing.T, o sessionOrg, inv store.Invitation)
		email      string
		wantWorker bool
		wantIs     error
		wantText   string
	}{
		{name: "pending invitation binds the worker", email: "Lee@Example.com", wantWorker: true},
		{name: "unknown email", email: "stranger@example.com", wantIs: store.ErrNotInvited},
		{name: "expired", email: "lee@example.com", wantIs: store.ErrInviteExpired,
			before: func(t *testing.T, o sessionOrg, _ store.Invitation) { o.clock.Advance(ttl + time.Second) }},
		{name: "revoked", email: "lee@example.com", wantIs: store.ErrInviteRevoked,
			before: func(t *testing.T, o sessionOrg, inv store.Invitation) {
				if _, err := o.st.RevokeInvitation(t.Context(), "w-owner", inv.ID); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "renewed after expiry", email: "lee@example.com", wantWorker: true,
			before: func(t *testing.T, o sessionOrg, inv store.Invitation) {
				o.clock.Advance(ttl + time.Second)
				again, resent, err := o.st.Invite(t.Context(), "w-owner", store.InviteSpec{Email: "LEE@example.com", Role: domain.RoleViewer, TTL: ttl})
				if err != nil || !resent || again.ID != inv.ID || again.Status != store.InvitePending {
					t.Fatalf("re-invite = %+v, resent %v, %v", again, resent, err)
				}
			}},
		{name: "not an email", email: "nope", wantIs: domain.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := newSessionOrg(t)
			ctx := t.Context()
			inv, resent, err := o.st.Invite(ctx, "w-owner", store.InviteSpec{Email: "lee@example.com", Position: "p-a", Role: domain.RoleViewer, TTL: ttl})
			if err != nil || resent || inv.Status != store.InvitePending {
				t.Fatalf("Invite = %+v, resent %v, %v", inv, resent, err)
			}
			if tt.before != nil {
				tt.before(t, o, inv)
			}
			id, sess, err := o.st.SignInWithEmail(ctx, tt.email, time.Hour)
			if tt.wantIs != nil {
				if !errors.Is(err, tt.wantIs) || !strings.Contains(err.Error(), tt.wantText) {
					t.Fatalf("err = %v, want %v", err, tt.wantIs)
				}
				return
			}
			if err != nil || sess.WorkerID != inv.Worker || !sess.OIDC || !sess.Strong() {
				t.Fatalf("SignInWithEmail = %+v, %v; want a session of %s", sess, err, inv.Worker)
			}
			if got, _ := o.st.GetInvitation(ctx, inv.ID); got.Status != store.InviteAccepted {
				t.Errorf("invitation status = %s, want accepted", got.Status)
			}
			if role, _ := o.st.OrgRole(ctx, inv.Worker); role != domain.RoleViewer {
				t.Errorf("role = %q, want viewer", role)
			}
			// Signing in again finds the same person; signing out revokes
			// the session's own token, so the session is gone for good.
			if _, again, err := o.st.SignInWithEmail(ctx, tt.email, time.Hour); err != nil || again.WorkerID != inv.Worker {
				t.Fatalf("second sign-in = %+v, %v", again, err)
			}
			if err := o.st.EndSession(ctx, id); err != nil {
				t.Fatal(err)
			}
			if _, err := o.st.VerifySession(ctx, id); !errors.Is(err, store.ErrNoSession) {
				t.Fatalf("after sign-out: %v", err)
			}
			if _, _, err := o.st.Invite(ctx, "w-owner", store.InviteSpec{Email: tt.email, Position: "p-a", Role: domain.RoleMember, TTL: ttl}); !errors.Is(err, domain.ErrConflict) {
				t.Fatalf("inviting a bound email: %v, want conflict", err)
			}
		})
	}
}

// TestOIDCSessionTokensGo: the token an OIDC session stood on goes with
// it, when it is signed out and when it expires (swept at the next
// sign-in), so `token list --all` does not fill with dead sign-ins.
func TestOIDCSessionTokensGo(t *testing.T) {
	t.Parallel()
	o := newSessionOrg(t)
	ctx := t.Context()
	inv, _, err := o.st.Invite(ctx, "w-owner", store.InviteSpec{Email: "lee@example.com", Position: "p-a", Role: domain.RoleMember, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	signIns := func() int {
		t.Helper()
		toks, err := o.st.ListTokens(ctx, store.TokenQuery{Worker: inv.Worker, All: true})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, tok := range toks {
			if tok.Label == "oidc sign-in" {
				n++
			}
		}
		return n
	}
	ended, _, err := o.st.SignInWithEmail(ctx, "lee@example.com", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := o.st.SignInWithEmail(ctx, "lee@example.com", time.Hour); err != nil {
		t.Fatal(err)
	}
	if n := signIns(); n != 2 {
		t.Fatalf("%d sign-in tokens after two sign-ins, want 2", n)
	}
	if err := o.st.EndSession(ctx, ended); err != nil {
		t.Fatal(err)
	}
	if n := signIns(); n != 1 {
		t.Fatalf("%d sign-in tokens after signing one out, want 1", n)
	}
	o.clock.Advance(time.Hour + time.Second)
	if _, _, err := o.st.SignInWithToken(ctx, o.owner, time.Hour); err != nil {
		t.Fatal(err)
	}
	if n := signIns(); n != 0 {
		t.Fatalf("%d sign-in tokens once the session expired and another signed in, want 0", n)
	}
}

func TestSignInWithEmailContact(t *testing.T) {
	t.Parallel()
	st := storetest.NewWith(t, store.Options{Transports: domain.NewTransports(email.Transport.TransportSpec)})
	seed(t, st)
	ctx := t.Context()
	if _, err := st.HireWorker(ctx, "w-owner", domain.Worker{ID: "w-maya", Kind: domain.WorkerHuman, PositionID: "p-a", Name: "Maya"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.SignInWithEmail(ctx, "maya@example.com", time.Hour); !errors.Is(err, store.ErrNotInvited) {
		t.Fatalf("before the contact: %v", err)
	}
	if _, err := st.SetContact(ctx, "w-owner", "w-maya", store.Contact{Kind: "email", Address: "Maya@Example.com"}); err != nil {
		t.Fatal(err)
	}
	if _, sess, err := st.SignInWithEmail(ctx, "maya@example.COM", time.Hour); err != nil || sess.WorkerID != "w-maya" {
		t.Fatalf("SignInWithEmail = %+v, %v", sess, err)
	}
	if _, err := st.DismissWorker(ctx, "w-owner", "w-maya"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.SignInWithEmail(ctx, "maya@example.com", time.Hour); !errors.Is(err, store.ErrNotInvited) {
		t.Fatalf("dismissed: %v", err)
	}
}

func TestOrgRoles(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		actor    string
		worker   string
		role     domain.OrgRole
		wantIs   error
		wantText string
	}{
		{name: "owner makes maya a viewer", actor: "w-owner", worker: "w-maya", role: domain.RoleViewer},
		{name: "owner makes maya an admin", actor: "w-owner", worker: "w-maya", role: domain.RoleAdmin},
		{name: "a member may not", actor: "w-maya", worker: "w-maya", role: domain.RoleAdmin, wantIs: domain.ErrForbidden, wantText: "member may not set org roles"},
		{name: "an AI worker may not", actor: "w-bot", worker: "w-maya", role: domain.RoleAdmin, wantIs: domain.ErrForbidden, wantText: "w-bot is an AI worker"},
		{name: "the owner stays admin", actor: "w-owner", worker: "w-owner", role: domain.RoleViewer, wantIs: domain.ErrInvalid, wantText: "always an admin"},
		{name: "AI workers have none", actor: "w-owner", worker: "w-bot", role: domain.RoleViewer, wantIs: domain.ErrInvalid, wantText: "AI worker"},
		{name: "unknown role", actor: "w-owner", worker: "w-maya", role: "boss", wantIs: domain.ErrInvalid, wantText: `(valid: "admin", "member", "viewer")`},
		{name: "unknown worker", actor: "w-owner", worker: "w-nope", role: domain.RoleViewer, wantIs: domain.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := newSessionOrg(t)
			ctx := t.Context()
			if role, err := o.st.OrgRole(ctx, "w-maya"); err != nil || role != domain.RoleMember {
				t.Fatalf("maya's default role = %q, %v", role, err)
			}
			before, err := o.st.SetOrgRole(ctx, tt.actor, tt.worker, tt.role)
			if tt.wantIs != nil {
				if !errors.Is(err, tt.wantIs) || !strings.Contains(err.Error(), tt.wantText) {
					t.Fatalf("err = %v, want %v containing %q", err, tt.wantIs, tt.wantText)
				}
				return
			}
			if err != nil || before != domain.RoleMember {
				t.Fatalf("SetOrgRole = %q, %v", before, err)
			}
			if got, _ := o.st.OrgRole(ctx, tt.worker); got != tt.role {
				t.Errorf("role = %q, want %q", got, tt.role)
			}
			admins, err := o.st.Admins(ctx)
			if err != nil {
				t.Fatal(err)
			}
			want := []string{"w-owner"}
			if tt.role == domain.RoleAdmin {
				want = append(want, tt.worker)
			}
			var got []string
			for _, a := range admins {
				got = append(got, a.ID)
			}
			if strings.Join(got, ",") != strings.Join(want, ",") {
				t.Errorf("admins = %v, want %v", got, want)
			}
		})
	}
}

func TestInviteRefusals(t *testing.T) {
	t.Parallel()
	o := newSessionOrg(t)
	ctx := t.Context()
	tests := []struct {
		name  string
		actor string
		spec  store.InviteSpec
		want  string
	}{
		{name: "member", actor: "w-maya", spec: store.InviteSpec{Email: "a@example.com", Position: "p-a", Role: domain.RoleMember}, want: "member may not invite people"},
		{name: "bad email", actor: "w-owner", spec: store.InviteSpec{Email: "a@", Position: "p-a", Role: domain.RoleMember}, want: "email: \"a@\" is not an email address"},
		{name: "bad role", actor: "w-owner", spec: store.InviteSpec{Email: "a@example.com", Position: "p-a", Role: "god"}, want: "role: unknown org role"},
		{name: "no position", actor: "w-owner", spec: store.InviteSpec{Email: "a@example.com", Role: domain.RoleMember}, want: "position: is required"},
		{name: "unknown position", actor: "w-owner", spec: store.InviteSpec{Email: "a@example.com", Position: "p-nope", Role: domain.RoleMember}, want: `position "p-nope": not found`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := o.st.Invite(ctx, tt.actor, tt.spec)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
	if invs, err := o.st.ListInvitations(ctx); err != nil || len(invs) != 0 {
		t.Fatalf("refused invitations left %v, %v", invs, err)
	}
}

// BenchmarkOrgRole is the read every tool call a person makes adds.
func BenchmarkOrgRole(b *testing.B) {
	st := storetest.New(b)
	if _, err := st.Bootstrap(b.Context(), nil); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := st.OrgRole(b.Context(), "w-owner"); err != nil {
			b.Fatal(err)
		}
	}
}
