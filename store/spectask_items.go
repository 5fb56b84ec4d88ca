package store

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

type taskItemRow struct {
	TaskID      string `gorm:"primaryKey"`
	Seq         int    `gorm:"primaryKey;autoIncrement:false"`
	Title       string `gorm:"not null"`
	Description string
	Files       string
	Verify      string
	Delta       string
	Framework   string
	Idioms      string // JSON list
	Budget      int
	BlockedBy   string
	State       string `gorm:"not null;index"`
	Worker      string `gorm:"index"`
	Summary     string
	Handouts    int
	Replans     int
	// HandoutSeq is the event that handed the item out, so the run it
	// woke can be told apart when it ends without a report.
	HandoutSeq int64 `gorm:"index"`
	StartedAt  *time.Time
	FinishedAt *time.Time
	// The pull request opened for the item; PRNumber > 0 when there is one.
	PRForge   string
	PRProject string
	PRNumber  int `gorm:"index"`
	PRURL     string
	PRHead    string
}

func (taskItemRow) TableName() string { return "spec_task_items" }

func (r taskItemRow) toDomain() domain.TaskItem {
	it := domain.TaskItem{Seq: r.Seq, Title: r.Title, Description: r.Description, Verify: r.Verify, State: domain.ItemState(r.State),
		Worker: r.Worker, Summary: r.Summary, Handouts: r.Handouts, Replans: r.Replans, StartedAt: utcPtr(r.StartedAt), FinishedAt: utcPtr(r.FinishedAt)}
	if r.PRNumber > 0 {
		it.PullRequest = &domain.ItemPullRequest{Forge: r.PRForge, Project: r.PRProject, Number: r.PRNumber, URL: r.PRURL, Head: r.PRHead}
	}
	it.Delta, it.Framework, it.Budget = r.Delta, r.Framework, r.Budget
	json.Unmarshal([]byte(r.Files), &it.Files)
	json.Unmarshal([]byte(r.Idioms), &it.Idioms)
	json.Unmarshal([]byte(r.BlockedBy), &it.BlockedBy)
	return it
}

func itemRow(task string, it domain.TaskItem) taskItemRow {
	files, _ := json.Marshal(it.Files)
	after, _ := json.Marshal(it.BlockedBy)
	if it.State == "" {
		it.State = domain.ItemPending
	}
	row := taskItemRow{TaskID: task, Seq: it.Seq, Title: it.Title, Description: it.Description, Files: string(files), Verify: it.Verify,
		BlockedBy: string(after), State: string(it.State), Worker: it.Worker, Summary: it.Summary, Handouts: it.Handouts, Replans: it.Replans,
		StartedAt: it.StartedAt, FinishedAt: it.FinishedAt}
	row.Delta, row.Framework, row.Budget = it.Delta, it.Framework, it.Budget
	if len(it.Idioms) > 0 {
		idioms, _ := json.Marshal(it.Idioms)
		row.Idioms = string(idioms)
	}
	if pr := it.PullRequest; pr != nil {
		row.PRForge, row.PRProject, row.PRNumber, row.PRURL, row.PRHead = pr.Forge, pr.Project, pr.Number, pr.URL, pr.Head
	}
	return row
}

func taskItems(db *gorm.DB, task string) ([]domain.TaskItem, error) {
	var rows []taskItemRow
	if err := db.Where("task_id = ?", task).Order("seq").Find(&rows).Error; err != nil {
		return nil, err
	}
	return mapRows(rows, taskItemRow.toDomain), nil
}

// saveItemTx writes an item's whole row.
func saveItemTx(tx *gorm.DB, task string, it domain.TaskItem) error {
	return tx.Save(new(itemRow(task, it))).Error
}

// SubmitSpec is the planner's spec: the design and the items. In spec
// generation or revision it replaces the items and asks the reviewer. In
// implementation it re-plans: the items replace the blocked item replace
// (keeping its predecessors and dependents), or are added when replace is 0.
func (s *Store) SubmitSpec(ctx context.Context, actor, id, design string, items []domain.TaskItem, replace int) (domain.SpecTask, error) {
	err := s.write(ctx, func(tx *gorm.DB) error {
		row, err := lockTask(tx, id)
		if err != nil {
			return err
		}
		if actor != row.Planner {
			return domain.Forbidden("only the planner %s submits the spec of %s", row.Planner, id)
		}
		if row.Asking != "" {
			return fmt.Errorf("%w: %s waits for the answer to the planner's question %s; submit the spec once it is answered", domain.ErrConflict, id, row.Asking)
		}
		if err := labelDocsTx(tx, &row); err != nil {
			return err
		}
		if row.State == string(domain.TaskImplementation) {
			return s.replanTx(tx, row, actor, items, replace)
		}
		if err := domain.CheckItems(items); err != nil {
			return err
		}
		if len(items) == 0 {
			return domain.Required("items")
		}
		ev, err := s.moveTx(tx, &row, actor, domain.ActSubmitSpec, "Spec submitted for review.")
		if err != nil {
			return err
		}
		if err := tx.Where("task_id = ?", id).Delete(&taskItemRow{}).Error; err != nil {
			return err
		}
		for i := range items {
			items[i].State, items[i].Worker, items[i].Summary, items[i].Handouts, items[i].Replans = domain.ItemPending, "", "", 0, 0
			if err := tx.Create(new(itemRow(id, items[i]))).Error; err != nil {
				return err
			}
		}
		if err := tx.Model(&specTaskRow{}).Where("id = ?", id).Update("design", design).Error; err != nil {
			return err
		}
		return s.notifyTaskTx(tx, row.Reviewer, row, ev.ID, "review the spec", fmt.Sprintf(
			"The spec of %s, %q, waits for your review: approve it or request changes with review_spec.\n\n## Design\n\n%s\n\n## Progress\n\n%s",
			id, row.Title, quote(design), domain.RenderChecklist(row.Title, items)))
	})
	if err != nil {
		return domain.SpecTask{}, fmt.Errorf("submit spec of %s: %w", id, err)
	}
	return s.getSpecTask(s.read(ctx), id)
}

// quote keeps a document within a notice's body limit.
func quote(doc string) string {
	const max = 64 << 10
	if len(doc) > max {
		return doc[:max] + "\n\n… (cut; the whole design is in get_spec_task)"
	}
	return doc
}

// replanTx puts new items in place of a blocked one (or beside the rest).
// The submitted items are numbered 1…n among themselves; they get the next
// free numbers, those without a blocker of their own inherit the replaced
// item's, and whatever waited for the replaced item waits for all of them.
func (s *Store) replanTx(tx *gorm.DB, row specTaskRow, actor string, items []domain.TaskItem, replace int) error {
	if err := domain.CheckItems(items); err != nil {
		return err
	}
	if len(items) == 0 {
		return domain.Required("items")
	}
	all, err := taskItems(tx, row.ID)
	if err != nil {
		return err
	}
	next := 1 // numbers are never reused, not even a replaced item's
	for _, it := range all {
		next = max(next, it.Seq+1)
	}
	if replace == 0 && !row.AddItems {
		return fmt.Errorf("%w: %s is in implementation; name the blocked item to re-plan with replace (new items are added only when the reviewer asks for changes)", domain.ErrConflict, row.ID)
	}
	if replace == 0 {
		if err := tx.Model(&specTaskRow{}).Where("id = ?", row.ID).Update("add_items", false).Error; err != nil {
			return err
		}
	}
	var old domain.TaskItem
	if replace > 0 {
		i := slices.IndexFunc(all, func(it domain.TaskItem) bool { return it.Seq == replace })
		if i < 0 {
			return domain.NotFound("item", fmt.Sprintf("%s/%d", row.ID, replace))
		}
		if old = all[i]; old.State != domain.ItemBlocked {
			return fmt.Errorf("%w: item %d of %s is %s; only a blocked item is re-planned", domain.ErrConflict, replace, row.ID, old.State)
		}
		all = slices.Delete(all, i, i+1)
	}
	renum := map[int]int{}
	for i, it := range items {
		renum[it.Seq] = next + i
	}
	var added []int
	for _, it := range items {
		nu := domain.TaskItem{Seq: renum[it.Seq], Title: it.Title, Description: it.Description, Files: it.Files, Verify: it.Verify,
			Delta: it.Delta, Framework: it.Framework, Idioms: it.Idioms, Budget: it.Budget,
			State: domain.ItemPending, Replans: old.Replans, BlockedBy: old.BlockedBy}
		if len(it.BlockedBy) > 0 {
			nu.BlockedBy = nil
			for _, b := range it.BlockedBy {
				nu.BlockedBy = append(nu.BlockedBy, renum[b])
			}
		}
		added = append(added, nu.Seq)
		all = append(all, nu)
	}
	for i, it := range all {
		if j := slices.Index(it.BlockedBy, replace); replace > 0 && j >= 0 {
			all[i].BlockedBy = slices.Concat(it.BlockedBy[:j], added, it.BlockedBy[j+1:])
		}
	}
	if err := domain.CheckItems(all); err != nil {
		return err
	}
	if replace > 0 {
		if err := replacedTx(tx, row.ID, replace, added); err != nil {
			return err
		}
		if _, err := s.stallEventTx(tx, row.ID, actor, domain.StallReplan, replace, old.Replans, added, fmt.Sprintf(
			"Item %d (%s) re-planned as items %s (attempt %d of %d).", replace, old.Title, joinInts(added), old.Replans, domain.MaxStallAttempts)); err != nil {
			return err
		}
	}
	if err := tx.Where("task_id = ?", row.ID).Delete(&taskItemRow{}).Error; err != nil {
		return err
	}
	for _, it := range all {
		if err := tx.Create(new(itemRow(row.ID, it))).Error; err != nil {
			return err
		}
		if slices.Contains(added, it.Seq) {
			if err := s.itemMovedTx(tx, row.ID, actor, it); err != nil {
				return err
			}
		}
	}
	return s.advanceTx(tx, row, actor, "")
}

// ReviewSpec is the reviewer's verdict. Approving a spec queues the
// implementation and hands out the first items; approving the built work
// finishes the task; approving a blocked task tries its blocked items
// again. Requesting changes sends the comments to the planner.
func (s *Store) ReviewSpec(ctx context.Context, actor, id string, approve bool, comments string) (domain.SpecTask, error) {
	err := s.write(ctx, func(tx *gorm.DB) error {
		row, err := lockTask(tx, id)
		if err != nil {
			return err
		}
		if actor != row.Reviewer {
			return domain.Forbidden("only the reviewer %s reviews %s", row.Reviewer, id)
		}
		if err := labelDocsTx(tx, &row); err != nil {
			return err
		}
		if !approve {
			return s.requestChangesTx(tx, row, actor, comments)
		}
		if row.State == string(domain.TaskBlocked) {
			return s.resumeTx(tx, row, actor, comments)
		}
		ev, err := s.moveTx(tx, &row, actor, domain.ActApprove, "Approved. "+comments)
		if err != nil {
			return err
		}
		if row.State == string(domain.TaskDone) {
			if err := s.judgeItemsTx(tx, row, actor, true, comments); err != nil {
				return err
			}
			return s.endSessionTx(tx, row, actor, ev.ID, true)
		}
		if _, err := s.moveTx(tx, &row, actor, domain.ActQueue, "Implementation queued."); err != nil {
			return err
		}
		if _, err := s.moveTx(tx, &row, actor, domain.ActImplement, "Implementation started."); err != nil {
			return err
		}
		return s.advanceTx(tx, row, actor, ev.ID)
	})
	if err != nil {
		return domain.SpecTask{}, fmt.Errorf("review spec of %s: %w", id, err)
	}
	return s.getSpecTask(s.read(ctx), id)
}

func (s *Store) requestChangesTx(tx *gorm.DB, row specTaskRow, actor, comments string) error {
	if strings.TrimSpace(comments) == "" {
		return domain.Invalid("comments", "say what to change when not approving")
	}
	if row.State == string(domain.TaskImplementationReview) {
		if err := s.judgeItemsTx(tx, row, actor, false, comments); err != nil {
			return err
		}
	}
	ev, err := s.moveTx(tx, &row, actor, domain.ActRequestChanges, "Changes requested: "+comments)
	if err != nil {
		return err
	}
	if err := tx.Model(&specTaskRow{}).Where("id = ?", row.ID).Updates(map[string]any{"revisions": row.Revisions + 1, "comments": comments,
		"add_items": row.State == string(domain.TaskImplementation)}).Error; err != nil {
		return err
	}
	how := "Revise the spec and send it again with submit_spec."
	if row.State == string(domain.TaskImplementation) {
		how = "Add the items that address them with submit_spec (replace 0)."
	}
	return s.notifyTaskTx(tx, row.Planner, row, ev.ID, "changes requested", fmt.Sprintf(
		"The reviewer %s requested changes to %s, %q:\n\n%s\n\n%s", actor, row.ID, row.Title, comments, how))
}

// resumeTx is the reviewer sending a blocked task back to work: its
// blocked items are tried again from scratch.
func (s *Store) resumeTx(tx *gorm.DB, row specTaskRow, actor, comments string) error {
	ev, err := s.moveTx(tx, &row, actor, domain.ActResume, "Resumed. "+comments)
	if err != nil {
		return err
	}
	if err := tx.Model(&taskItemRow{}).Where("task_id = ? AND state = ?", row.ID, string(domain.ItemBlocked)).
		Updates(map[string]any{"state": string(domain.ItemPending), "worker": "", "handouts": 0, "replans": 0}).Error; err != nil {
		return err
	}
	return s.advanceTx(tx, row, actor, ev.ID)
}

// itemID names an item in errors: t-login/3.
func itemID(task string, seq int) string { return task + "/" + strconv.Itoa(seq) }

func joinInts(v []int) string {
	out := make([]string, len(v))
	for i, n := range v {
		out[i] = strconv.Itoa(n)
	}
	return strings.Join(out, ", ")
}
