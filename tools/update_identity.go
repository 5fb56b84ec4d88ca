package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
)

type updateIdentityIn struct {
	ID       string `json:"id,omitempty" jsonschema:"the worker (w-…): by default you, or one below you"`
	Identity string `json:"identity" jsonschema:"who the worker is, in markdown, replacing what was there"`
}

func updateIdentity() Tool {
	return define("update_identity", "Replace a Worker's identity markdown (you by default, or a worker below you).",
		func(ctx context.Context, env *Env, in updateIdentityIn) (domain.Worker, error) {
			if in.ID == "" {
				in.ID = env.Caller
			}
			return env.Store.UpdateIdentity(ctx, env.Caller, in.ID, in.Identity)
		}).annotated("Update identity", destructive|idempotent)
}
