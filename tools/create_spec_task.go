package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store/designdocs"
)

type createSpecTaskIn struct {
	ID       string   `json:"id,omitempty"`
	Title    string   `json:"title"`
	Prompt   string   `json:"prompt"`
	Priority int      `json:"priority,omitempty"`
	Repo     string   `json:"repo,omitempty"`
	Planner  string   `json:"planner"`
	Builders []string `json:"builders"`
	Reviewer string   `json:"reviewer,omitempty"`
	Parallel int      `json:"parallel,omitempty"`
}

func createSpecTask() Tool {
	return define("create_spec_task", "Start a spec task: planner specs, reviewer approves, builders build.",
		func(ctx context.Context, env *Env, in createSpecTaskIn) (specStateOut, error) {
			var origin string
			if in.Repo != "" {
				top, url, err := designdocs.Resolve(ctx, in.Repo, remote(ctx, env))
				if err != nil {
					return specStateOut{}, err
				}
				in.Repo, origin = top, url
			}
			t, err := env.Store.CreateSpecTask(ctx, env.Caller, domain.SpecTask{ID: in.ID, Title: in.Title, Prompt: in.Prompt,
				Priority: in.Priority, Repo: in.Repo, Origin: origin, Planner: in.Planner, Builders: in.Builders, Reviewer: in.Reviewer, Parallel: in.Parallel})
			if err != nil {
				return specStateOut{}, err
			}
			return stateOf(t), pushDocs(ctx, env, t.ID, "requirements of "+t.ID, nil)
		}).annotated("Create spec task", openWorld)
}
