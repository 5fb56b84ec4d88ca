package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

type revokeInvitationIn struct {
	ID string `json:"id" jsonschema:"the invitation (inv-…), from list_invitations"`
}

func revokeInvitation() Tool {
	return define("revoke_invitation", "Withdraw an invitation not yet accepted: signing in with it is refused and its pending worker is dismissed. An admin's.",
		func(ctx context.Context, env *Env, in revokeInvitationIn) (store.Invitation, error) {
			if in.ID == "" {
				return store.Invitation{}, domain.Required("id")
			}
			return env.Store.RevokeInvitation(ctx, env.Caller, in.ID)
		}).annotated("Revoke invitation", destructive|idempotent)
}
