package tools

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

func TestInvite(t *testing.T) {
	type out struct {
		Email        string `json:"email"`
		Worker       string `json:"worker"`
		Role         string `json:"role"`
		Status       string `json:"status"`
		Resent       bool   `json:"resent"`
		Sent         string `json:"sent"`
		Stream       string `json:"stream"`
		Link         string `json:"link"`
		ID           string `json:"id"`
		CannotAccept string `json:"cannot_accept"`
	}
	lee := map[string]any{"email": "Lee@Example.com", "position": "p-support", "role": "viewer"}
	withIssuer := func(t *testing.T, f fixture) {
		must(t)(0, f.env.Store.SetSetting(t.Context(), OIDCIssuerSetting, "https://accounts.example.com"))
	}
	withIdP := func(t *testing.T, f fixture) {
		withIssuer(t, f)
		must(t)(0, f.env.Store.SetSetting(t.Context(), OIDCClientIDSetting, "helix-org"))
	}
	inviteLee := func(t *testing.T, f fixture) {
		must(t)(0, errOf(f.env.Store.Invite(t.Context(), "w-owner", store.InviteSpec{Email: "lee@example.com", Position: "p-support", Role: domain.RoleViewer, TTL: time.Hour})))
	}
	runTable(t, "invite", []toolCase[out]{
		{
			name:  "makes a pending worker and emails the link",
			setup: withIdP,
			args:  lee,
			want:  out{Email: "lee@example.com", Worker: "w-lee", Role: "viewer", Status: "pending", Sent: "email", Stream: "s-dm-w-lee-w-owner"},
			check: func(t *testing.T, f fixture, got out) {
				if got.Link != "/ui/signin?invitation="+got.ID {
					t.Errorf("link = %q", got.Link)
				}
				evs, err := f.env.Store.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{got.Stream}})
				if err != nil || len(evs) != 1 || evs[0].Message.Subject != "Your invitation to the organisation" {
					t.Fatalf("DM = %+v", evs)
				}
				if role, _ := f.env.Store.OrgRole(t.Context(), "w-lee"); role != domain.RoleViewer {
					t.Errorf("role = %s", role)
				}
			},
		},
		{
			name:  "the same email again resends",
			setup: func(t *testing.T, f fixture) { withIdP(t, f); inviteLee(t, f) },
			args:  map[string]any{"email": "lee@example.com", "role": "member"},
			want:  out{Email: "lee@example.com", Worker: "w-lee", Role: "member", Status: "pending", Resent: true, Sent: "email", Stream: "s-dm-w-lee-w-owner"},
		},
		{
			name: "absolute link with auth.public_url",
			setup: func(t *testing.T, f fixture) {
				withIdP(t, f)
				must(t)(0, f.env.Store.SetSetting(t.Context(), PublicURLSetting, "https://org.example.com/"))
			},
			args: lee,
			want: out{Email: "lee@example.com", Worker: "w-lee", Role: "viewer", Status: "pending", Sent: "email", Stream: "s-dm-w-lee-w-owner"},
			check: func(t *testing.T, f fixture, got out) {
				if got.Link != "https://org.example.com/ui/signin?invitation="+got.ID {
					t.Errorf("link = %q", got.Link)
				}
			},
		},
		{
			name: "no identity provider: kept, but says it cannot be accepted yet and what to set",
			args: lee,
			want: out{Email: "lee@example.com", Worker: "w-lee", Role: "viewer", Status: "pending", Sent: "email", Stream: "s-dm-w-lee-w-owner",
				CannotAccept: "No one can accept this invitation yet: an invited person signs in with the identity provider, and this server has none " +
					"(auth.oidc.issuer and auth.oidc.client_id are not set). Set auth.oidc.issuer, auth.oidc.client_id and, if the provider issued one, " +
					"auth.oidc.client_secret (helix-org config set, or the Settings page); the invitation is kept, and its link works once they are set."},
			check: func(t *testing.T, f fixture, got out) {
				if inv, err := f.env.Store.GetInvitation(t.Context(), got.ID); err != nil || inv.Status != store.InvitePending {
					t.Errorf("stored invitation = %+v, %v; want it kept, pending", inv, err)
				}
			},
		},
		{
			name:  "an issuer without a client id names what is missing",
			setup: withIssuer,
			args:  lee,
			want: out{Email: "lee@example.com", Worker: "w-lee", Role: "viewer", Status: "pending", Sent: "email", Stream: "s-dm-w-lee-w-owner",
				CannotAccept: "No one can accept this invitation yet: an invited person signs in with the identity provider, and this server has none " +
					"(auth.oidc.client_id is not set). Set auth.oidc.issuer, auth.oidc.client_id and, if the provider issued one, " +
					"auth.oidc.client_secret (helix-org config set, or the Settings page); the invitation is kept, and its link works once they are set."},
		},
		{
			name:  "with an identity provider it says nothing of accepting",
			setup: withIdP,
			args:  lee,
			want:  out{Email: "lee@example.com", Worker: "w-lee", Role: "viewer", Status: "pending", Sent: "email", Stream: "s-dm-w-lee-w-owner"},
		},
		{name: "a member may not", caller: "w-maya", args: lee, wantErr: []string{"member may not invite people"}, wantIs: domain.ErrForbidden},
		{name: "missing email", args: map[string]any{"position": "p-support"}, wantErr: []string{"email: is required"}},
		{name: "bad email", args: map[string]any{"email": "lee", "position": "p-support"}, wantErr: []string{`email: "lee" is not an email address`}},
		{name: "bad role", args: map[string]any{"email": "lee@example.com", "position": "p-support", "role": "boss"}, wantErr: []string{`role: unknown org role "boss"`}},
		{name: "missing position", args: map[string]any{"email": "lee@example.com"}, wantErr: []string{"position: is required"}},
	}, cmpopts.IgnoreFields(out{}, "Link", "ID"))
}
