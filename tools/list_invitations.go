package tools

import (
	"context"

	"github.com/helixml/helix-org/store"
)

type listInvitationsIn struct{}

type listInvitationsOut struct {
	Invitations []store.Invitation `json:"invitations" jsonschema:"every invitation, newest first, with its status: pending, accepted, expired or revoked"`
}

func listInvitations() Tool {
	return define("list_invitations", "List the invitations of people to the org (invite): email, worker, org role, status and expiry. An admin's.",
		func(ctx context.Context, env *Env, _ listInvitationsIn) (listInvitationsOut, error) {
			invs, err := env.Store.ListInvitations(ctx)
			return listInvitationsOut{Invitations: orEmpty(invs)}, err
		}).annotated("List invitations", readOnly|idempotent)
}
