package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
)

type dismissWorkerIn struct {
	ID string `json:"id" jsonschema:"the worker to dismiss (w-…), below you"`
}

func dismissWorker() Tool {
	return define("dismiss_worker", "Dismiss a Worker below you: its endpoint stops answering; its history stays.",
		func(ctx context.Context, env *Env, in dismissWorkerIn) (domain.Worker, error) {
			if in.ID == "" {
				return domain.Worker{}, domain.Required("id")
			}
			if in.ID == env.Caller {
				return domain.Worker{}, domain.Invalid("id", "you cannot dismiss yourself")
			}
			return env.Store.DismissWorker(ctx, env.Caller, in.ID)
		}).annotated("Dismiss worker", destructive|idempotent)
}
