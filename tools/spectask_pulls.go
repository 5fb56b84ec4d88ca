package tools

import (
	"context"
	"fmt"

	"github.com/helixml/helix-org/domain"
)

// itemPullRequest opens the pull request a delivered item's task asks
// for — one per item, or one when the task's last item is delivered —
// from the builder's workspace branch, and records it on the item. A
// builder whose branch already has a pull request for the task pushes to
// it instead of opening a second: GitHub and GitLab allow one per branch.
func itemPullRequest(ctx context.Context, env *Env, task string, it domain.TaskItem) (domain.TaskItem, error) {
	v, err := env.Store.GetSpecTask(ctx, task)
	if err != nil {
		return it, err
	}
	t := v.Task
	switch {
	case it.State != domain.ItemDone || t.PullRequests == "" || t.PullRequests == domain.PullRequestsNone:
		return it, nil
	case t.PullRequests == domain.PullRequestsTask && t.State != domain.TaskImplementationReview:
		return it, nil // items are still being worked
	}
	pr, err := openItemPullRequest(ctx, env, v.Items, t, it)
	if err != nil {
		return it, fmt.Errorf("item %d is reported %s, but its pull request (pullRequests %q) was not opened: %w", it.Seq, it.State, t.PullRequests, err)
	}
	return env.Store.SetItemPullRequest(ctx, task, it.Seq, pr)
}

// pullRequestReady refuses a delivery the task would open a pull request
// for when the builder's workspace cannot give one, before the report
// changes anything, so the builder can fix it and report again.
func pullRequestReady(ctx context.Context, env *Env, task string, outcome domain.ItemOutcome) error {
	if outcome == domain.OutcomeBlocked {
		return nil
	}
	v, err := env.Store.GetSpecTask(ctx, task)
	if err != nil || v.Task.PullRequests == "" || v.Task.PullRequests == domain.PullRequestsNone {
		return err
	}
	ws, err := attachedWorkspace(ctx, env, env.Caller)
	if err == nil {
		_, err = forgeClient(ctx, env, ws)
	}
	if err != nil {
		return fmt.Errorf("%s opens pull requests (pullRequests %q) from your workspace, which cannot open one; nothing was reported: %w", task, v.Task.PullRequests, err)
	}
	return nil
}

func openItemPullRequest(ctx context.Context, env *Env, items []domain.TaskItem, t domain.SpecTask, it domain.TaskItem) (domain.ItemPullRequest, error) {
	ws, c, err := pushWorkspace(ctx, env, it.Worker)
	if err != nil {
		return domain.ItemPullRequest{}, err
	}
	for _, o := range items {
		if pr := o.PullRequest; pr != nil && pr.Forge == ws.Forge && pr.Project == ws.Project && pr.Head == ws.Branch {
			return *pr, nil
		}
	}
	title, body := fmt.Sprintf("%s: %s", t.Title, it.Title), fmt.Sprintf("Item %d of spec task %s, built by %s.\n\n%s", it.Seq, t.ID, it.Worker, it.Summary)
	if t.PullRequests == domain.PullRequestsTask {
		title, body = t.Title, fmt.Sprintf("Spec task %s, built by %s.\n\n%s", t.ID, it.Worker, domain.RenderChecklist(t.Title, items))
	}
	pr, err := c.Open(ctx, ws.Project, ws.Branch, ws.Base, title, body)
	if err != nil {
		return domain.ItemPullRequest{}, err
	}
	return domain.ItemPullRequest{Forge: ws.Forge, Project: ws.Project, Number: pr.Number, URL: pr.URL, Head: pr.Head}, nil
}
