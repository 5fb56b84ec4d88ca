package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
)

func dismissWorker() Tool {
	return define("dismiss_worker", "Dismiss a Worker below you.",
		func(ctx context.Context, env *Env, in idIn) (domain.Worker, error) {
			if in.ID == "" {
				return domain.Worker{}, domain.Required("id")
			}
			if in.ID == env.Caller {
				return domain.Worker{}, domain.Invalid("id", "you cannot dismiss yourself")
			}
			return env.Store.DismissWorker(ctx, env.Caller, in.ID)
		}).annotated("Dismiss worker", destructive|idempotent)
}
