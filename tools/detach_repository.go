package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
)

type detachRepositoryIn struct {
	Worker string `json:"worker" jsonschema:"the AI worker whose repository to detach (w-…): yourself or a worker below you"`
}

func detachRepository() Tool {
	return define("detach_repository", "Detach the repository attached to an AI worker: from its next run its workspace is a repository of its own "+
		"again; the checkout is kept aside, not deleted.",
		func(ctx context.Context, env *Env, in detachRepositoryIn) (domain.Workspace, error) {
			if in.Worker == "" {
				return domain.Workspace{}, domain.Required("worker")
			}
			ws, err := env.Store.Workspace(ctx, in.Worker)
			if err != nil {
				return domain.Workspace{}, err
			}
			if ws.URL == "" {
				return domain.Workspace{}, domain.Invalid("worker", "%s has no repository attached (list_repositories shows what is)", in.Worker)
			}
			return env.Store.AttachRepository(ctx, env.Caller, domain.Workspace{WorkerID: in.Worker})
		}).annotated("Detach repository", destructive|idempotent)
}
