package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
)

type updateIdentityIn struct {
	ID       string `json:"id,omitempty" jsonschema:"default: you"`
	Identity string `json:"identity" jsonschema:"markdown"`
}

func updateIdentity() Tool {
	return define("update_identity", "Replace the identity markdown of yourself or a Worker below you.",
		func(ctx context.Context, env *Env, in updateIdentityIn) (domain.Worker, error) {
			if in.ID == "" {
				in.ID = env.Caller
			}
			return env.Store.UpdateIdentity(ctx, env.Caller, in.ID, in.Identity)
		})
}
