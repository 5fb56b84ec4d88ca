package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
)

type updateIdentityIn struct {
	ID       string `json:"id,omitempty"`
	Identity string `json:"identity"`
}

func updateIdentity() Tool {
	return define("update_identity", "Replace a Worker's identity markdown.",
		func(ctx context.Context, env *Env, in updateIdentityIn) (domain.Worker, error) {
			if in.ID == "" {
				in.ID = env.Caller
			}
			return env.Store.UpdateIdentity(ctx, env.Caller, in.ID, in.Identity)
		}).annotated("Update identity", destructive|idempotent)
}
