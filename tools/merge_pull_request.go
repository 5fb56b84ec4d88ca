package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
)

type mergePullRequestIn struct {
	Number int    `json:"number" jsonschema:"the pull request's number (GitHub) or merge request's iid (GitLab)"`
	Worker string `json:"worker,omitempty" jsonschema:"whose attached repository it is on (w-…): yourself by default, or a worker below you"`
}

type mergePullRequestOut struct {
	Merged  bool   `json:"merged" jsonschema:"true once the forge merged it"`
	Project string `json:"project" jsonschema:"the repository on the forge"`
	Number  int    `json:"number" jsonschema:"the pull request merged"`
}

func mergePullRequest() Tool {
	return define("merge_pull_request", "Merge a pull request (GitHub) or merge request (GitLab) on the repository attached to a worker, "+
		"with the server's credentials. High risk: it waits for approval in a run that read untrusted data.",
		func(ctx context.Context, env *Env, in mergePullRequestIn) (mergePullRequestOut, error) {
			if in.Number <= 0 {
				return mergePullRequestOut{}, domain.Invalid("number", "give the pull request's number (a positive integer)")
			}
			worker := in.Worker
			if worker == "" {
				worker = env.Caller
			} else if worker != env.Caller {
				if err := env.Store.CheckManages(ctx, env.Caller, worker); err != nil {
					return mergePullRequestOut{}, err
				}
			}
			ws, err := env.Store.Workspace(ctx, worker)
			if err != nil {
				return mergePullRequestOut{}, err
			}
			if ws.Forge == "" || ws.Project == "" {
				return mergePullRequestOut{}, domain.Invalid("worker", "%s has no repository on a forge attached (list_repositories shows it)", worker)
			}
			c, err := forgeClient(ctx, env, ws)
			if err != nil {
				return mergePullRequestOut{}, err
			}
			if err := c.Merge(ctx, ws.Project, in.Number); err != nil {
				return mergePullRequestOut{}, err
			}
			return mergePullRequestOut{Merged: true, Project: ws.Project, Number: in.Number}, nil
		}).annotated("Merge pull request", destructive|openWorld)
}
