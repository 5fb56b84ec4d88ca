package store

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

// ReportItem is a builder's word on its item: delivered, partial (rest
// becomes a new item the item's dependents also wait for) or blocked.
// The orchestrator then moves the task on in the same transaction.
func (s *Store) ReportItem(ctx context.Context, actor, id string, seq int, outcome domain.ItemOutcome, summary, rest string) (domain.TaskItem, error) {
	if !slices.Contains(domain.ItemOutcomes, outcome) {
		return domain.TaskItem{}, domain.EnumError("outcome", "outcome", outcome, domain.ItemOutcomes)
	}
	if strings.TrimSpace(summary) == "" {
		return domain.TaskItem{}, domain.Required("summary")
	}
	if outcome == domain.OutcomePartial && strings.TrimSpace(rest) == "" {
		return domain.TaskItem{}, domain.Invalid("rest", "say what remains when the outcome is partial")
	}
	var got domain.TaskItem
	err := s.write(ctx, func(tx *gorm.DB) error {
		row, items, it, err := taskItemTx(tx, id, seq)
		if err != nil {
			return err
		}
		if err := labelDocsTx(tx, &row); err != nil {
			return err
		}
		if it.State != domain.ItemInProgress || it.Worker != actor {
			return fmt.Errorf("%w: item %s is %s with %q, not in progress with %s", domain.ErrConflict, itemID(id, seq), it.State, it.Worker, actor)
		}
		if row.State != string(domain.TaskImplementation) {
			return fmt.Errorf("%w: %s is in state %q; items are reported in %q (allowed: %s)", domain.ErrConflict, id, row.State,
				domain.TaskImplementation, actionList(domain.TaskState(row.State)))
		}
		now := s.Now()
		it.State, it.Summary, it.FinishedAt = domain.ItemDone, summary, &now
		if outcome != domain.OutcomeBlocked {
			if err := reportedByTx(tx, id, seq, actor); err != nil {
				return err
			}
		}
		if outcome == domain.OutcomeBlocked {
			it.State = domain.ItemBlocked
			run, err := handoutRun(tx, id, seq, actor)
			if err != nil {
				return err
			}
			if err := s.recordLessonTx(tx, id, it, lessonBlocked, actor, run, summary); err != nil {
				return err
			}
			if err := s.judgeRunTx(tx, domain.RunOutcome{Activation: run, Outcome: domain.OutcomeFailed, Source: domain.SourceItem, By: actor,
				Note: "item " + itemID(id, seq) + " blocked: " + summary}); err != nil {
				return err
			}
		}
		got = it
		if err := saveItemTx(tx, id, it); err != nil {
			return err
		}
		if err := s.itemMovedTx(tx, id, actor, it); err != nil {
			return err
		}
		if outcome == domain.OutcomePartial {
			if err := addRestTx(tx, id, items, it, rest); err != nil {
				return err
			}
		}
		return s.advanceTx(tx, row, actor, "")
	})
	if err != nil {
		return domain.TaskItem{}, fmt.Errorf("report item %s: %w", itemID(id, seq), err)
	}
	return got, nil
}

// addRestTx adds what a partial delivery left as the next item, after the
// delivered part, and makes the delivered item's dependents wait for it.
func addRestTx(tx *gorm.DB, id string, items []domain.TaskItem, done domain.TaskItem, rest string) error {
	next := 0
	for _, it := range items {
		next = max(next, it.Seq+1)
	}
	nu := domain.TaskItem{Seq: next, Title: "Rest of " + done.Title, Description: rest, Files: done.Files, Verify: done.Verify,
		Framework: done.Framework, Idioms: done.Idioms, Budget: done.Budget, BlockedBy: []int{done.Seq}, State: domain.ItemPending, Replans: done.Replans}
	if err := tx.Create(new(itemRow(id, nu))).Error; err != nil {
		return err
	}
	for _, it := range items {
		if slices.Contains(it.BlockedBy, done.Seq) {
			it.BlockedBy = append(it.BlockedBy, next)
			if err := saveItemTx(tx, id, it); err != nil {
				return err
			}
		}
	}
	return nil
}

// SyncChecklist takes the marks of a progress.md an agent committed: items
// ticked done or blocked there are so in the store (domain.ApplyChecklist
// says which marks count), and the task moves on. It returns the items
// that changed.
func (s *Store) SyncChecklist(ctx context.Context, actor, id, progress string) ([]domain.TaskItem, error) {
	lines, err := domain.ParseChecklist(progress)
	if err != nil {
		return nil, err
	}
	var changed []domain.TaskItem
	err = s.write(ctx, func(tx *gorm.DB) error {
		row, err := lockTask(tx, id)
		if err != nil || row.State != string(domain.TaskImplementation) {
			return err
		}
		if err := labelDocsTx(tx, &row); err != nil {
			return err
		}
		items, err := taskItems(tx, id)
		if err != nil {
			return err
		}
		changed = domain.ApplyChecklist(items, lines)
		now := s.Now()
		for _, it := range changed {
			worker := it.Worker
			it.Summary, it.FinishedAt = "marked "+string(it.State)+" in a commit of progress.md", &now
			if err := saveItemTx(tx, id, it); err != nil {
				return err
			}
			if err := s.itemMovedTx(tx, id, actor, it); err != nil {
				return err
			}
			if it.State == domain.ItemBlocked {
				if err := s.recordLessonTx(tx, id, it, lessonBlocked, worker, "", it.Summary); err != nil {
					return err
				}
			}
		}
		if len(changed) == 0 {
			return nil
		}
		return s.advanceTx(tx, row, actor, "")
	})
	if err != nil {
		return nil, fmt.Errorf("sync progress.md of %s: %w", id, err)
	}
	return changed, nil
}

// endedRunTx looks after the items a finished run was handed and did not
// report: each is handed out once more, then blocked. A run the server's
// stop interrupted is not one of them: its triggers run again.
func (s *Store) endedRunTx(tx *gorm.DB, a domain.Activation) error {
	if a.Status == domain.ActivationInterrupted {
		return nil
	}
	var seqs []int64
	if err := tx.Model(&triggerRow{}).Where("activation_id = ?", a.ID).Pluck("event_seq", &seqs).Error; err != nil || len(seqs) == 0 {
		return err
	}
	if err := s.endedExploreTx(tx, a, seqs); err != nil {
		return err
	}
	var rows []taskItemRow
	if err := tx.Where("handout_seq IN ? AND state = ? AND worker = ?", seqs, string(domain.ItemInProgress), a.WorkerID).Find(&rows).Error; err != nil {
		return err
	}
	for _, r := range rows {
		it := r.toDomain()
		it.Worker, it.StartedAt, it.State = "", nil, domain.ItemPending
		kind, words := lessonRetried, strings.TrimSpace(fmt.Sprintf("run %s ended without a report: %s %s", a.ID, a.Status, a.Error))
		if it.Handouts >= 2 {
			it.State, it.Summary = domain.ItemBlocked, fmt.Sprintf("the runs of %s ended twice without a report (last: %s %s)", a.WorkerID, a.Status, a.Error)
			kind, words = lessonBlocked, it.Summary
		}
		if err := saveItemTx(tx, r.TaskID, it); err != nil {
			return err
		}
		if err := s.itemMovedTx(tx, r.TaskID, "", it); err != nil {
			return err
		}
		if err := s.recordLessonTx(tx, r.TaskID, it, kind, a.WorkerID, a.ID, words); err != nil {
			return err
		}
		task, err := lockTask(tx, r.TaskID)
		if err != nil {
			return err
		}
		if err := s.advanceTx(tx, task, "", ""); err != nil {
			return err
		}
	}
	return nil
}

// judgeItemsTx gives the runs that delivered a task's done items what the
// reviewer made of the work: accepted (helped) or sent back (failed).
func (s *Store) judgeItemsTx(tx *gorm.DB, row specTaskRow, reviewer string, accepted bool, comments string) error {
	items, err := taskItems(tx, row.ID)
	if err != nil {
		return err
	}
	o, verdict := domain.OutcomeHelped, "accepted"
	if !accepted {
		o, verdict = domain.OutcomeFailed, "sent back"
	}
	for _, it := range items {
		if it.State != domain.ItemDone || it.Worker == "" {
			continue
		}
		var run string
		if err := tx.Model(&itemRunRow{}).Where("task_id = ? AND seq = ?", row.ID, it.Seq).Pluck("run_id", &run).Error; err != nil {
			return err
		}
		note := strings.TrimSpace(fmt.Sprintf("item %s %s by %s. %s", itemID(row.ID, it.Seq), verdict, reviewer, comments))
		if err := s.judgeRunTx(tx, domain.RunOutcome{Activation: run, Outcome: o, Source: domain.SourceItem, By: reviewer, Note: note}); err != nil {
			return err
		}
	}
	return nil
}

// itemRunRow is the run an item was delivered in: the reviewer's verdict
// on the work is that run's outcome. It is kept apart from the item's
// row, which a re-plan writes anew.
type itemRunRow struct {
	TaskID string `gorm:"primaryKey"`
	Seq    int    `gorm:"primaryKey;autoIncrement:false"`
	RunID  string `gorm:"not null"`
}

func (itemRunRow) TableName() string { return "spec_task_item_runs" }

// reportedByTx notes the run an item was delivered in, if a run of worker
// claimed its hand-out.
func reportedByTx(tx *gorm.DB, task string, seq int, worker string) error {
	run, err := handoutRun(tx, task, seq, worker)
	if err != nil || run == "" {
		return err
	}
	return tx.Save(&itemRunRow{TaskID: task, Seq: seq, RunID: run}).Error
}
