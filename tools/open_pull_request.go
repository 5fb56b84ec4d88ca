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
			_, pr, err := pushAndOpen(ctx, env, env.Caller, in.Title, in.Body)
			return pr, err
		}).annotated("Open pull request", openWorld)
}

// pushAndOpen commits what is uncommitted in worker's workspace, pushes
// its branch and opens a pull request of it with the server's credentials.
func pushAndOpen(ctx context.Context, env *Env, worker, title, body string) (domain.Workspace, forge.PullRequest, error) {
	ws, c, err := pushWorkspace(ctx, env, worker)
	if err != nil {
		return ws, forge.PullRequest{}, err
	}
	pr, err := c.Open(ctx, ws.Project, ws.Branch, ws.Base, title, body)
	return ws, pr, err
}

// pushWorkspace commits what is uncommitted in worker's workspace, as the
// worker, and pushes its branch with the server's credentials.
func pushWorkspace(ctx context.Context, env *Env, worker string) (domain.Workspace, forge.Client, error) {
	ws, err := attachedWorkspace(ctx, env, worker)
	if err != nil {
		return ws, forge.Client{}, err
	}
	c, err := forgeClient(ctx, env, ws)
	if err != nil {
		return ws, c, err
	}
	w, err := env.Store.GetWorker(ctx, worker)
	if err != nil {
		return ws, c, err
	}
	_, committed, err := workspace.Commit(ctx, ws.Dir, workspace.Author{ID: w.ID, Name: w.Name}, env.ActivationID)
	if err != nil {
		return ws, c, err
	}
	if committed && env.ActivationID != "" {
		// The commit holds the run's changes: later runs read them.
		l, err := env.Store.ActivationLabel(ctx, env.ActivationID)
		if err == nil {
			err = env.Store.LabelWorkspace(ctx, w.ID, l)
		}
		if err != nil {
			return ws, c, err
		}
	}
	return ws, c, remote(ctx, env).PushBranch(ctx, ws.Dir, ws.URL, ws.Branch, pushAuth(c))
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
