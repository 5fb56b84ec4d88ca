package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store/designdocs"
)

type createSpecTaskIn struct {
	ID           string   `json:"id,omitempty" jsonschema:"the task's id (t-…); by default derived from title"`
	Title        string   `json:"title" jsonschema:"the task's title"`
	Prompt       string   `json:"prompt" jsonschema:"what is to be built, as the planner reads it"`
	Priority     int      `json:"priority,omitempty" jsonschema:"higher is handed to builders first; default 0"`
	Repo         string   `json:"repo,omitempty" jsonschema:"a git repository for the documents: a local path, or an https://, http:// or file:// URL the server clones"`
	Planner      string   `json:"planner" jsonschema:"the worker that writes the spec (w-…)"`
	Builders     []string `json:"builders" jsonschema:"the workers items are handed to (w-…)"`
	Reviewer     string   `json:"reviewer,omitempty" jsonschema:"the worker that approves the spec and the work (w-…); by default the owner"`
	Parallel     int      `json:"parallel,omitempty" jsonschema:"how many items are worked at once; default 2"`
	PullRequests string   `json:"pullRequests,omitempty" jsonschema:"when the server opens a pull request from a builder's workspace branch: item (each delivered item), task (when the last item is delivered) or none (default)"`
}

func createSpecTask() Tool {
	return define("create_spec_task", "Start a spec task: the planner writes a spec, the reviewer approves it, the builders build its items.",
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
				Priority: in.Priority, Repo: in.Repo, Origin: origin, Planner: in.Planner, Builders: in.Builders, Reviewer: in.Reviewer, Parallel: in.Parallel,
				PullRequests: domain.PullRequestMode(in.PullRequests)})
			if err != nil {
				return specStateOut{}, err
			}
			return stateOf(t), pushDocs(ctx, env, t.ID, "requirements of "+t.ID, nil)
		}, enum("pullRequests", domain.PullRequestModes)).annotated("Create spec task", openWorld)
}
