package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store/designdocs"
)

type createSpecTaskIn struct {
	ID       string   `json:"id,omitempty" jsonschema:"t-…; from the title when omitted"`
	Title    string   `json:"title"`
	Prompt   string   `json:"prompt" jsonschema:"what to build"`
	Priority int      `json:"priority,omitempty" jsonschema:"higher first"`
	Repo     string   `json:"repo,omitempty" jsonschema:"git repository for the design docs: absolute path, or https/file URL to clone"`
	Planner  string   `json:"planner" jsonschema:"worker writing the spec"`
	Builders []string `json:"builders" jsonschema:"workers building the items"`
	Reviewer string   `json:"reviewer,omitempty" jsonschema:"person approving; default the owner"`
	Parallel int      `json:"parallel,omitempty" jsonschema:"items in progress at once; default 2"`
}

func createSpecTask() Tool {
	return define("create_spec_task", "Start a spec task: the planner writes a spec, the reviewer approves it, builders build its items.",
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
		})
}
