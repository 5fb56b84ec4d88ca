package store

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

// SetItemPullRequest records the pull request the server opened for an
// item, so reviews and checks on it find their way to the item's builder.
func (s *Store) SetItemPullRequest(ctx context.Context, task string, seq int, pr domain.ItemPullRequest) (domain.TaskItem, error) {
	if pr.Number < 1 || pr.Forge == "" || pr.Project == "" {
		return domain.TaskItem{}, domain.Invalid("pullRequest", "needs a forge, a project and a number of 1 or more, got %s %s #%d", pr.Forge, pr.Project, pr.Number)
	}
	var got domain.TaskItem
	err := s.write(ctx, func(tx *gorm.DB) error {
		_, _, it, err := taskItemTx(tx, task, seq)
		if err != nil {
			return err
		}
		it.PullRequest = &pr
		got = it
		return saveItemTx(tx, task, it)
	})
	if err != nil {
		return domain.TaskItem{}, fmt.Errorf("record pull request of item %s: %w", itemID(task, seq), err)
	}
	return got, nil
}

// PullRequestItem is the item the server opened pull request number of
// project on forge for (the project compared case-insensitively, as
// GitHub and GitLab compare paths), or ErrNotFound.
func (s *Store) PullRequestItem(ctx context.Context, forge, project string, number int) (domain.ItemRef, error) {
	var r taskItemRow
	err := s.read(ctx).Where("pr_forge = ? AND LOWER(pr_project) = ? AND pr_number = ?", forge, strings.ToLower(project), number).
		Order("task_id, seq").Take(&r).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return domain.ItemRef{}, fmt.Errorf("%w: no spec-task item opened %s pull request %s#%d", domain.ErrNotFound, forge, project, number)
	}
	if err != nil {
		return domain.ItemRef{}, fmt.Errorf("item of pull request %s#%d: %w", project, number, err)
	}
	return domain.ItemRef{Task: r.TaskID, Item: r.Seq, Worker: r.Worker, URL: r.PRURL}, nil
}

// wakeBuilderTx tells an item's builder, in its inbox, about an event on
// the item's pull request that was just stored on the task's stream.
func (s *Store) wakeBuilderTx(tx *gorm.DB, w domain.ItemRef, ev domain.Event) error {
	m := ev.Message
	extra, _ := json.Marshal(taskNotice{Task: w.Task, Ask: "answer the review or check on your pull request", Item: w.Item})
	body := fmt.Sprintf("%s wrote on the pull request of item %d of %s, %s (event %s on %s):\n\n%s\n\nAnswer it in your workspace; "+
		"what you push to your branch updates the pull request.", cmp.Or(m.From, "someone"), w.Item, w.Task, w.URL, ev.ID, ev.StreamID, quote(m.Body))
	_, err := s.notifyLabelTx(tx, w.Worker, domain.Message{Subject: fmt.Sprintf("Spec task %s, item %d: %s", w.Task, w.Item, m.Subject),
		Body: body, BodyContentType: "text/markdown", Extra: extra, ThreadID: m.ThreadID}, ev.ID, ev.Label)
	return err
}
