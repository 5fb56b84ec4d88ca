package store

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

// The orchestrator of a task's implementation. It runs inside the write
// transaction of whatever changed the graph (an approval, a report, a
// re-plan, a run that ended), so its decisions commit with their cause:
// after a crash nothing is half handed out, and an item is never given
// to two workers.

// advanceTx moves an implementation on: finished when every item is
// done, else ready items are handed out, else the task is stalled.
func (s *Store) advanceTx(tx *gorm.DB, row specTaskRow, actor, causedBy string) error {
	if row.State != string(domain.TaskImplementation) {
		return nil
	}
	items, err := taskItems(tx, row.ID)
	if err != nil {
		return err
	}
	if settled(items) {
		done, total := domain.Progress(items)
		note := fmt.Sprintf("All %d items are done.", total)
		if done < total {
			note = fmt.Sprintf("All %d items are settled: %d done, %d skipped.", total, done, total-done)
		}
		ev, err := s.moveTx(tx, &row, actor, domain.ActFinish, note)
		if err != nil {
			return err
		}
		if err := s.notifyTaskTx(tx, row.Reviewer, row, ev.ID, "review the implementation", fmt.Sprintf(
			"Every item of %s, %q, is done. Approve the work or request changes with review_spec.\n\n%s",
			row.ID, row.Title, domain.RenderChecklist(row.Title, items))); err != nil {
			return err
		}
		return s.handOutElsewhereTx(tx, row.ID, causedBy)
	}
	working, waiting, err := s.handOutTx(tx, row, items, causedBy)
	if err != nil {
		return err
	}
	if working == 0 && waiting == 0 {
		if err := s.stallTx(tx, row, actor, items); err != nil {
			return err
		}
	}
	return s.handOutElsewhereTx(tx, row.ID, causedBy)
}

// handOutTx gives ready items to free builders within the task's cap. It
// returns how many items are in progress and how many ready ones wait
// for a builder.
func (s *Store) handOutTx(tx *gorm.DB, row specTaskRow, items []domain.TaskItem, causedBy string) (working, waiting int, err error) {
	busy, err := busyBuilders(tx)
	if err != nil {
		return 0, 0, err
	}
	var builders []string
	json.Unmarshal([]byte(row.Builders), &builders)
	working = countState(items, domain.ItemInProgress)
	ready := domain.ReadyItems(items)
	for i, it := range ready {
		free := slices.IndexFunc(builders, func(b string) bool { return !busy[b] })
		if working >= row.Parallel || free < 0 {
			return working, len(ready) - i, nil
		}
		if err := s.handoutTx(tx, row, items, it, builders[free], causedBy); err != nil {
			return 0, 0, err
		}
		busy[builders[free]] = true
		working++
	}
	return working, 0, nil
}

// handOutElsewhereTx lets builders this task just freed take ready items
// of other tasks in implementation; it never stalls or finishes those.
func (s *Store) handOutElsewhereTx(tx *gorm.DB, except, causedBy string) error {
	var rows []specTaskRow
	if err := tx.Where("state = ? AND id <> ?", string(domain.TaskImplementation), except).Order("priority DESC, created_at").Find(&rows).Error; err != nil {
		return err
	}
	for _, row := range rows {
		items, err := taskItems(tx, row.ID)
		if err != nil {
			return err
		}
		if _, _, err := s.handOutTx(tx, row, items, causedBy); err != nil {
			return err
		}
	}
	return nil
}

// busyBuilders are the workers on an item of any task: one item at a time.
func busyBuilders(tx *gorm.DB) (map[string]bool, error) {
	var ws []string
	if err := tx.Model(&taskItemRow{}).Where("state = ? AND worker <> ''", string(domain.ItemInProgress)).Pluck("worker", &ws).Error; err != nil {
		return nil, err
	}
	busy := map[string]bool{}
	for _, w := range ws {
		busy[w] = true
	}
	return busy, nil
}

// handoutTx gives an item to a builder and wakes it with the item, the
// design and what the item's blockers delivered.
func (s *Store) handoutTx(tx *gorm.DB, row specTaskRow, items []domain.TaskItem, it domain.TaskItem, worker, causedBy string) error {
	now := s.Now()
	it.State, it.Worker, it.Handouts, it.StartedAt, it.FinishedAt = domain.ItemInProgress, worker, it.Handouts+1, &now, nil
	var b strings.Builder
	fmt.Fprintf(&b, "You build item %d of spec task %s, %q: %s\n\n", it.Seq, row.ID, row.Title, it.Title)
	budget := ""
	if it.Budget > 0 {
		budget = fmt.Sprintf("at most %d tool calls; past it, report partial or blocked rather than going on", it.Budget)
	}
	for _, d := range [][2]string{{"", it.Description}, {"Delta: ", it.Delta}, {"Files: ", strings.Join(it.Files, ", ")},
		{"Framework: ", it.Framework}, {"Idioms: ", strings.Join(it.Idioms, "; ")}, {"Budget: ", budget}, {"Verify: ", it.Verify}} {
		if d[1] != "" {
			fmt.Fprintf(&b, "%s%s\n\n", d[0], d[1])
		}
	}
	for _, prev := range items {
		if slices.Contains(it.BlockedBy, prev.Seq) {
			fmt.Fprintf(&b, "Item %d (%s) delivered: %s\n\n", prev.Seq, prev.Title, prev.Summary)
		}
	}
	fmt.Fprintf(&b, "When finished call report_item with task %q, item %d and outcome delivered, partial (say what remains) or blocked (say why).\n\n## Design\n\n%s",
		row.ID, it.Seq, quote(row.Design))
	ev, err := s.notifyItemTx(tx, worker, row, causedBy, fmt.Sprintf("build item %d", it.Seq), it.Seq, b.String())
	if err != nil {
		return err
	}
	r := itemRow(row.ID, it)
	r.HandoutSeq = ev.Seq
	if err := tx.Save(&r).Error; err != nil {
		return err
	}
	return s.itemMovedTx(tx, row.ID, "", it)
}

// stallTx handles a task with items left and none ready: the planner is
// asked to re-plan or skip the first blocked item, up to MaxStallAttempts
// times along one line of replacements; then the task is aborted —
// blocked, the reviewer asked — so a builder that always fails ends in a
// question, not a loop. Each step is an event on the task's stream.
func (s *Store) stallTx(tx *gorm.DB, row specTaskRow, actor string, items []domain.TaskItem) error {
	i := slices.IndexFunc(items, func(it domain.TaskItem) bool { return it.State == domain.ItemBlocked })
	if i < 0 {
		return nil // items left wait for a builder to be free
	}
	it := items[i]
	if it.Replans < domain.MaxStallAttempts {
		it.Replans++
		if err := saveItemTx(tx, row.ID, it); err != nil {
			return err
		}
		ev, err := s.stallEventTx(tx, row.ID, actor, domain.StallAsked, it.Seq, it.Replans, nil, fmt.Sprintf(
			"Item %d (%s) is blocked and nothing else is ready: the planner re-plans or skips it (attempt %d of %d). %s",
			it.Seq, it.Title, it.Replans, domain.MaxStallAttempts, it.Summary))
		if err != nil {
			return err
		}
		return s.notifyTaskTx(tx, row.Planner, row, ev.ID, "re-plan a blocked item", fmt.Sprintf(
			"Spec task %s is stalled: item %d (%s) is blocked: %s\n\nRe-plan just that part: call submit_spec with replace %d and the items "+
				"that take its place; or, if the task can do without it, skip it with skip_item (task %q, item %d, the reason) "+
				"(attempt %d of %d; after that the task is aborted and the reviewer decides).\n\n%s", row.ID, it.Seq, it.Title, it.Summary, it.Seq,
			row.ID, it.Seq, it.Replans, domain.MaxStallAttempts, domain.RenderChecklist(row.Title, items)))
	}
	if _, err := s.stallEventTx(tx, row.ID, actor, domain.StallAbort, it.Seq, it.Replans, nil, fmt.Sprintf(
		"Aborted: item %d (%s) stayed blocked after %d re-plans: %s", it.Seq, it.Title, it.Replans, it.Summary)); err != nil {
		return err
	}
	ev, err := s.moveTx(tx, &row, actor, domain.ActBlock, fmt.Sprintf("Item %d stayed blocked after %d re-plans.", it.Seq, it.Replans))
	if err != nil {
		return err
	}
	return s.notifyTaskTx(tx, row.Reviewer, row, ev.ID, "blocked, your decision", fmt.Sprintf(
		"Spec task %s, %q, is blocked: item %d (%s) stayed blocked after %d re-plans: %s\n\nApprove with review_spec to try the "+
			"blocked items again, or cancel_spec_task.", row.ID, row.Title, it.Seq, it.Title, it.Replans, it.Summary))
}

// ClaimItem lets a builder take a ready item itself, within the task's cap.
func (s *Store) ClaimItem(ctx context.Context, actor, id string, seq int) (domain.TaskItem, error) {
	var got domain.TaskItem
	err := s.write(ctx, func(tx *gorm.DB) error {
		row, items, it, err := taskItemTx(tx, id, seq)
		if err != nil {
			return err
		}
		var builders []string
		json.Unmarshal([]byte(row.Builders), &builders)
		switch {
		case !slices.Contains(builders, actor):
			return domain.Forbidden("%s is not a builder of %s (builders: %s)", actor, id, strings.Join(builders, ", "))
		case row.State != string(domain.TaskImplementation):
			return fmt.Errorf("%w: %s is in state %q; items are claimed in %q (allowed: %s)", domain.ErrConflict, id, row.State,
				domain.TaskImplementation, actionList(domain.TaskState(row.State)))
		case !slices.ContainsFunc(domain.ReadyItems(items), func(r domain.TaskItem) bool { return r.Seq == seq }):
			return fmt.Errorf("%w: item %s is %s and not ready to claim", domain.ErrConflict, itemID(id, seq), it.State)
		}
		busy, err := busyBuilders(tx)
		if err != nil {
			return err
		}
		if busy[actor] {
			return fmt.Errorf("%w: %s is already on an item; report it first", domain.ErrConflict, actor)
		}
		if n := countState(items, domain.ItemInProgress); n >= row.Parallel {
			return fmt.Errorf("%w: %s already has %d items in progress, its cap", domain.ErrConflict, id, n)
		}
		now := s.Now()
		it.State, it.Worker, it.Handouts, it.StartedAt = domain.ItemInProgress, actor, it.Handouts+1, &now
		got = it
		if err := saveItemTx(tx, id, it); err != nil {
			return err
		}
		return s.itemMovedTx(tx, id, actor, it)
	})
	if err != nil {
		return domain.TaskItem{}, fmt.Errorf("claim item %s: %w", itemID(id, seq), err)
	}
	return got, nil
}

func actionList(s domain.TaskState) string {
	var out []string
	for _, a := range s.Allowed() {
		out = append(out, fmt.Sprintf("%q", a))
	}
	if len(out) == 0 {
		return "none, the task is finished"
	}
	return strings.Join(out, ", ")
}

// settled says every item is done or skipped.
func settled(items []domain.TaskItem) bool {
	return !slices.ContainsFunc(items, func(it domain.TaskItem) bool { return !it.State.Settled() })
}

func countState(items []domain.TaskItem, st domain.ItemState) int {
	n := 0
	for _, it := range items {
		if it.State == st {
			n++
		}
	}
	return n
}

// taskItemTx reads a task, its items and one of them.
func taskItemTx(tx *gorm.DB, id string, seq int) (specTaskRow, []domain.TaskItem, domain.TaskItem, error) {
	row, err := lockTask(tx, id)
	if err != nil {
		return row, nil, domain.TaskItem{}, err
	}
	items, err := taskItems(tx, id)
	if err != nil {
		return row, nil, domain.TaskItem{}, err
	}
	i := slices.IndexFunc(items, func(it domain.TaskItem) bool { return it.Seq == seq })
	if i < 0 {
		return row, items, domain.TaskItem{}, domain.NotFound("item", itemID(id, seq))
	}
	return row, items, items[i], nil
}
