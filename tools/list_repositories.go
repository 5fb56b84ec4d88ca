package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
)

type listRepositoriesIn struct {
	Worker string `json:"worker,omitempty" jsonschema:"only this worker's workspace (w-…); every recorded workspace when omitted"`
}

type listRepositoriesOut struct {
	Workspaces []domain.Workspace `json:"workspaces" jsonschema:"each AI worker's workspace: the attached repository (url, base branch; none for a repository of its own), its branch, its directory and head commit after the last run"`
}

func listRepositories() Tool {
	return define("list_repositories", "List AI workers' workspaces and the repositories attached to them.",
		func(ctx context.Context, env *Env, in listRepositoriesIn) (listRepositoriesOut, error) {
			if in.Worker != "" {
				ws, err := env.Store.Workspace(ctx, in.Worker)
				return listRepositoriesOut{Workspaces: []domain.Workspace{ws}}, err
			}
			all, err := env.Store.Workspaces(ctx)
			return listRepositoriesOut{Workspaces: all}, err
		}).annotated("List repositories", readOnly|idempotent)
}
