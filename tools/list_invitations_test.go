package tools

import (
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

func TestListInvitations(t *testing.T) {
	type out struct {
		Invitations []struct {
			Email  string `json:"email"`
			Worker string `json:"worker"`
			Status string `json:"status"`
		} `json:"invitations"`
	}
	runTable(t, "list_invitations", []toolCase[out]{
		{
			name: "none",
			args: map[string]any{},
			want: out{Invitations: []struct {
				Email  string `json:"email"`
				Worker string `json:"worker"`
				Status string `json:"status"`
			}{}},
		},
		{
			name: "pending and expired",
			setup: func(t *testing.T, f fixture) {
				ctx := t.Context()
				must(t)(0, errOf(f.env.Store.Invite(ctx, "w-owner", store.InviteSpec{Email: "old@example.com", Position: "p-support", Role: domain.RoleMember, TTL: time.Minute})))
				f.clock.Advance(time.Hour)
				must(t)(0, errOf(f.env.Store.Invite(ctx, "w-owner", store.InviteSpec{Email: "new@example.com", Position: "p-support", Role: domain.RoleMember, TTL: time.Hour})))
			},
			args: map[string]any{},
			want: out{Invitations: []struct {
				Email  string `json:"email"`
				Worker string `json:"worker"`
				Status string `json:"status"`
			}{{Email: "new@example.com", Worker: "w-new", Status: "pending"}, {Email: "old@example.com", Worker: "w-old", Status: "expired"}}},
		},
	})
}
