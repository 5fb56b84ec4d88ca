package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
)

type updateIdentityIn struct {
	ID       string `json:"id,omitempty" jsonschema:"the worker; yourself when omitted"`
	Identity string `json:"identity" jsonschema:"the new identity markdown"`
}

func updateIdentity() Tool {
	return define("update_identity", "Replace a Worker's identity markdown: yours (when no id is given) or that of a worker below you in the org chart.",
		func(ctx context.Context, env *Env, in updateIdentityIn) (domain.Worker, error) {
			if in.ID == "" {
				in.ID = env.Caller
			}
			return env.Store.UpdateIdentity(ctx, env.Caller, in.ID, in.Identity)
		})
}
