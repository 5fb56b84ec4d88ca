package tools

import (
	"context"
	"fmt"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store/designdocs"
)

// Spec tasks with a repository keep their documents in git as well as in
// the store. The store is the record; these helpers mirror each change
// into a commit on helix-design-docs authored as the caller, and read back
// the progress.md an agent may have edited and committed.

// pushDocs writes the task's documents as they are in the store, plus
// extra files (a session note), and commits them as the caller. The store
// is read under the worktree's lock so renderings commit in order.
func pushDocs(ctx context.Context, env *Env, task, message string, extra map[string]string) error {
	t, err := env.Store.GetSpecTask(ctx, task)
	if err != nil || t.Task.Repo == "" {
		return err
	}
	book, err := designdocs.Open(ctx, t.Task.Repo)
	if err != nil {
		return fmt.Errorf("design docs of %s: %w", task, err)
	}
	author := designdocs.Author{ID: env.Caller}
	if w, err := env.Store.GetWorker(ctx, env.Caller); err == nil {
		author.Name = w.Name
	}
	_, err = book.WriteFrom(ctx, author, task, message, func() (map[string]string, error) {
		view, err := env.Store.GetSpecTask(ctx, task)
		if err != nil {
			return nil, err
		}
		files := map[string]string{"requirements.md": view.Docs.Requirements}
		if view.Docs.Design != "" {
			files["design.md"] = view.Docs.Design
		}
		if view.Docs.Progress != "" {
			files["progress.md"] = view.Docs.Progress
		}
		for k, v := range extra {
			files[k] = v
		}
		return files, nil
	})
	if err != nil {
		return fmt.Errorf("commit design docs of %s: %w", task, err)
	}
	if t.Task.Origin != "" {
		// The commit stands either way: an origin that refuses the push
		// (no write access, a dumb HTTP server) leaves the docs local.
		if err := remote(ctx, env).Push(ctx, book.Top, t.Task.Origin); err != nil {
			env.logger().Warn("design docs not pushed", "task", task, "err", err)
		}
	}
	return nil
}

// pullProgress takes the checklist marks committed in the task's
// progress.md into the store before the caller's change.
func pullProgress(ctx context.Context, env *Env, task string) error {
	view, err := env.Store.GetSpecTask(ctx, task)
	if err != nil || view.Task.Repo == "" || view.Docs.Progress == "" {
		return err
	}
	book, err := designdocs.Open(ctx, view.Task.Repo)
	if err != nil {
		return fmt.Errorf("design docs of %s: %w", task, err)
	}
	md, edited, err := book.Edited(ctx, task, "progress.md")
	if err != nil || !edited || md == view.Docs.Progress {
		return err
	}
	_, err = env.Store.SyncChecklist(ctx, env.Caller, task, md)
	return err
}

// specStateOut is what a spec-task change answers: where the task is now.
type specStateOut struct {
	Task  string           `json:"task"`
	State domain.TaskState `json:"state"`
}

func stateOf(t domain.SpecTask) specStateOut { return specStateOut{Task: t.ID, State: t.State} }

// itemStateOut is what an item change answers.
type itemStateOut struct {
	Item   int              `json:"item"`
	State  domain.ItemState `json:"state"`
	Worker string           `json:"worker"`
	// PullRequest is set once the server opened one for the item.
	PullRequest *domain.ItemPullRequest `json:"pullRequest,omitempty" jsonschema:"the pull request the server opened for the item"`
}

func itemStateOf(it domain.TaskItem) itemStateOut {
	return itemStateOut{Item: it.Seq, State: it.State, Worker: it.Worker, PullRequest: it.PullRequest}
}
