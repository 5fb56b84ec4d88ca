package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store/workspace"
	"github.com/helixml/helix-org/transports/forge"
)

type openPullRequestIn struct {
	Title string `json:"title" jsonschema:"the pull request's title"`
	Body  string `json:"body,omitempty" jsonschema:"its description, in markdown"`
}

func openPullRequest() Tool {
	return define("open_pull_request", "Open a pull request (GitHub) or merge request (GitLab) of your workspace's branch helix/<you> into the base branch "+
		"of the repository attached to you. The server commits what is uncommitted, pushes the branch and opens it with its own credentials.",
		func(ctx context.Context, env *Env, in openPullRequestIn) (forge.PullRequest, error) {
			if in.Title == "" {
				return forge.PullRequest{}, domain.Required("title")
			}
			ws, err := attachedWorkspace(ctx, env, env.Caller)
			if err != nil {
				return forge.PullRequest{}, err
			}
			c, err := forgeClient(ctx, env, ws)
			if err != nil {
				return forge.PullRequest{}, err
			}
			w, err := env.Store.GetWorker(ctx, env.Caller)
			if err != nil {
				return forge.PullRequest{}, err
			}
			_, committed, err := workspace.Commit(ctx, ws.Dir, workspace.Author{ID: w.ID, Name: w.Name}, env.ActivationID)
			if err != nil {
				return forge.PullRequest{}, err
			}
			if committed && env.ActivationID != "" {
				// The commit holds the run's changes: later runs read them.
				l, err := env.Store.ActivationLabel(ctx, env.ActivationID)
				if err == nil {
					err = env.Store.LabelWorkspace(ctx, w.ID, l)
				}
				if err != nil {
					return forge.PullRequest{}, err
				}
			}
			if err := remote(ctx, env).PushBranch(ctx, ws.Dir, ws.URL, ws.Branch, pushAuth(c)); err != nil {
				return forge.PullRequest{}, err
			}
			return c.Open(ctx, ws.Project, ws.Branch, ws.Base, in.Title, in.Body)
		}).annotated("Open pull request", openWorld)
}

// attachedWorkspace is a worker's workspace when a repository on a forge
// is attached to it and a run has checked it out.
func attachedWorkspace(ctx context.Context, env *Env, worker string) (domain.Workspace, error) {
	ws, err := env.Store.Workspace(ctx, worker)
	if err != nil {
		return ws, err
	}
	switch {
	case ws.URL == "":
		return ws, domain.Invalid("workspace", "%s has no repository attached; a manager attaches one with attach_repository", worker)
	case ws.Forge == "" || ws.Project == "":
		return ws, domain.Invalid("workspace", "%s's repository %s names no forge and project; attach it again with forge (github or gitlab) and project", worker, ws.URL)
	case !ws.Current():
		return ws, domain.Invalid("workspace", "%s's checkout of %s is made at its next run; open the pull request from a run", worker, ws.URL)
	}
	return ws, workspace.Check(ctx, ws.Dir)
}
