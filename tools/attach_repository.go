package tools

import (
	"cmp"
	"context"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store/workspace"
	"github.com/helixml/helix-org/transports/forge"
)

type attachRepositoryIn struct {
	Worker string `json:"worker" jsonschema:"the AI worker whose workspace the repository becomes (w-…): yourself or a worker below you"`
	URL    string `json:"url" jsonschema:"the repository: an https://, http:// or file:// URL the server clones (the spec-task rules apply)"`
	Branch string `json:"branch,omitempty" jsonschema:"the branch to start from; the worker works on helix/<worker> made from it. Default: the repository's default branch"`
	Forge  string `json:"forge,omitempty" jsonschema:"where its pull requests are opened: github or gitlab. Default: github for github.com URLs, gitlab for the host of gitlab.url"`
	// Project is asked for where the URL does not say it (a mirror).
	Project string `json:"project,omitempty" jsonschema:"the repository on the forge: owner/repo on GitHub, group/project on GitLab. Default: the URL's path"`
}

func attachRepository() Tool {
	return define("attach_repository", "Attach a git repository to an AI worker: from its next run its workspace is a checkout of the repository "+
		"on branch helix/<worker>, made from branch; its current workspace is kept aside, not deleted.",
		func(ctx context.Context, env *Env, in attachRepositoryIn) (domain.Workspace, error) {
			if in.Worker == "" {
				return domain.Workspace{}, domain.Required("worker")
			}
			if in.URL == "" {
				return domain.Workspace{}, domain.Required("url")
			}
			// Refuse a worker the caller may not change before cloning
			// anything for it.
			if in.Worker != env.Caller {
				if err := env.Store.CheckManages(ctx, env.Caller, in.Worker); err != nil {
					return domain.Workspace{}, err
				}
			}
			source, err := remote(ctx, env).Clone(ctx, in.URL)
			if err != nil {
				return domain.Workspace{}, err
			}
			base, err := workspace.Base(ctx, source, in.Branch)
			if err != nil {
				return domain.Workspace{}, err
			}
			kind, project := defaultForge(ctx, env, in.URL)
			in.Forge, in.Project = cmp.Or(in.Forge, kind), cmp.Or(in.Project, project)
			if in.Forge != "" && in.Forge != forge.GitHub && in.Forge != forge.GitLab {
				return domain.Workspace{}, domain.Invalid("forge", "%q is not a forge (valid: %s, %s)", in.Forge, forge.GitHub, forge.GitLab)
			}
			if in.Forge == "" {
				in.Project = ""
			}
			return env.Store.AttachRepository(ctx, env.Caller, domain.Workspace{WorkerID: in.Worker, URL: in.URL, Base: base,
				Forge: in.Forge, Project: in.Project, Source: source})
		}).annotated("Attach repository", openWorld|idempotent)
}
