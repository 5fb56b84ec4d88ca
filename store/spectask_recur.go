package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

// A recurring spec task is a schedule stream (the clock, with its
// restart-safe ticks) and a row here holding the task to make on each
// tick. The tick's append makes the task in the same transaction
// (recurTx), so a crash leaves both or neither; while the last task made
// is not done or cancelled, a tick makes none and says so on that task's
// stream. Everything it decides by is stored, so a restart changes
// nothing.

type recurrenceRow struct {
	StreamID string `gorm:"primaryKey"`
	// Template is the domain.SpecTask each tick makes, as JSON.
	Template string `gorm:"not null"`
	// DocsLabel is the label of who wrote the prompt, for every task made.
	DocsLabel string `gorm:"not null;default:''"`
	// LastTask is the task the latest tick made, "" before the first.
	LastTask  string `gorm:"not null;default:''"`
	CreatedBy string `gorm:"not null"`
	CreatedAt time.Time
	// StoppedAt, once set, ends the recurrence: its ticks start nothing.
	StoppedAt *time.Time
	StoppedBy string
}

func (recurrenceRow) TableName() string { return "spec_task_recurrences" }

// Recurrence is a recurring spec task: the schedule stream whose ticks
// make a task from the same prompt.
type Recurrence struct {
	Stream   string `json:"stream"`
	Cron     string `json:"cron"`
	Timezone string `json:"timezone,omitempty"`
}

// RecurringTick is the extra of the note a skipped tick leaves.
type RecurringTick struct {
	Recurrence string `json:"recurrence"`
	Tick       string `json:"tick"`
	Skipped    bool   `json:"skipped"`
	Running    string `json:"running"`
}

// CreateRecurringSpecTask makes a schedule stream ticking on cron (in
// timezone, UTC by default) whose every tick starts task t anew, with the
// same checks as CreateSpecTask now and at each tick. t.ID is refused:
// each task's id is derived from its title.
func (s *Store) CreateRecurringSpecTask(ctx context.Context, actor string, t domain.SpecTask, cron, timezone string) (Recurrence, error) {
	if t.ID != "" {
		return Recurrence{}, domain.Invalid("id", "is not taken with a schedule: each tick's task gets an id from the title")
	}
	if err := defaultTask(&t); err != nil {
		return Recurrence{}, err
	}
	template, _ := json.Marshal(t)
	conf := map[string]any{"cron": cron, "message": map[string]string{
		"subject": "Recurring spec task: " + cut(t.Title, domain.MaxSubject/2), "body": "Each tick starts spec task " + fmt.Sprintf("%q", t.Title) +
			" anew from the same prompt, unless the last one is still open."}}
	if timezone != "" {
		conf["timezone"] = timezone
	}
	cfg, _ := json.Marshal(conf)
	tr := domain.Transport{Kind: domain.TransportSchedule, Config: cfg}
	if err := s.transports.Validate(tr); err != nil {
		return Recurrence{}, fmt.Errorf("schedule: %w", err)
	}
	rec := Recurrence{Cron: cron, Timezone: timezone}
	err := s.write(ctx, func(tx *gorm.DB) error {
		if err := checkTaskPeople(tx, actor, t); err != nil {
			return err
		}
		if err := s.admitStream(ctx, tx, actor, tr); err != nil {
			return err
		}
		id, err := pickID(tx, &streamRow{}, "stream", domain.PrefixStream, "", "every "+t.Title)
		if err != nil {
			return err
		}
		rec.Stream = id
		row := streamRow{ID: id, Name: "every " + cut(t.Title, domain.MaxName-16), Description: "Ticks that start spec task " + cut(t.Title, domain.MaxName) + " anew",
			TransportKind: string(tr.Kind), TransportConfig: string(cfg), CreatedBy: actor, CreatedAt: s.Now()}
		if err := tx.Create(&row).Error; err != nil {
			return err
		}
		if err := tx.Create(&recurrenceRow{StreamID: id, Template: string(template), DocsLabel: WritingLabel(ctx).Encode(),
			CreatedBy: actor, CreatedAt: s.Now()}).Error; err != nil {
			return err
		}
		return s.audit(tx, Change{Action: "create_recurring_spec_task", Actor: actor, Target: id, After: map[string]any{"task": t, "schedule": rec}})
	})
	if err != nil {
		return Recurrence{}, fmt.Errorf("create recurring spec task: %w", err)
	}
	return rec, nil
}

// recurTx runs in the append of every tick of a schedule stream: when the
// stream is a recurring task's, it starts the task, or leaves a note that
// the tick is skipped while the last one is open. A task the tick cannot
// start (its planner dismissed, its creator's authority gone) is told to
// the creator's inbox; the tick itself is always kept.
func (s *Store) recurTx(tx *gorm.DB, tick domain.Event) error {
	var rows []recurrenceRow
	if err := tx.Where("stream_id = ?", tick.StreamID).Limit(1).Find(&rows).Error; err != nil || len(rows) == 0 {
		return err
	}
	r := rows[0]
	if r.StoppedAt != nil {
		return nil
	}
	var t domain.SpecTask
	if err := json.Unmarshal([]byte(r.Template), &t); err != nil {
		return fmt.Errorf("recurring task on %s: %w", r.StreamID, err)
	}
	if r.LastTask != "" {
		last, err := lockTask(tx, r.LastTask)
		if err != nil && !errors.Is(err, domain.ErrNotFound) {
			return err
		}
		if err == nil && !domain.TaskState(last.State).Final() {
			return s.skipTickTx(tx, r, last, tick)
		}
	}
	if err := tx.SavePoint("recur").Error; err != nil {
		return err
	}
	id, err := s.createSpecTaskTx(tx, r.CreatedBy, t, r.DocsLabel, TaskStart{})
	if err != nil {
		if rerr := tx.RollbackTo("recur").Error; rerr != nil {
			return rerr
		}
		s.log.Warn("recurring spec task: tick made no task", "stream", r.StreamID, "tick", tick.ID, "err", err)
		_, nerr := s.notifyTx(tx, r.CreatedBy, domain.Message{Subject: "Recurring spec task " + r.StreamID + ": no task this tick",
			Body: fmt.Sprintf("The tick %s could not start spec task %q: %v", tick.ID, t.Title, err)}, tick.ID)
		return nerr
	}
	return tx.Model(&recurrenceRow{}).Where("stream_id = ?", r.StreamID).Update("last_task", id).Error
}

// skipTickTx tells, on the open task's stream and in the log, that a
// tick made no task because last is still open.
func (s *Store) skipTickTx(tx *gorm.DB, r recurrenceRow, last specTaskRow, tick domain.Event) error {
	s.log.Info("recurring spec task: tick skipped, the last task is open", "stream", r.StreamID, "tick", tick.ID, "task", last.ID, "state", last.State)
	extra, _ := json.Marshal(RecurringTick{Recurrence: r.StreamID, Tick: tick.ID, Skipped: true, Running: last.ID})
	_, err := s.appendTx(tx, domain.Event{StreamID: domain.TaskStream(last.ID), CausedBy: tick.ID, Message: domain.Message{
		From: "helix-org", Subject: "Tick skipped: " + last.ID + " is still " + last.State,
		Body: fmt.Sprintf("The tick %s of %s started no new task: %s is still %s. The next tick after it is done or cancelled starts one.",
			tick.ID, r.StreamID, last.ID, last.State), Extra: extra}}, AppendOptions{})
	return err
}

// StopRecurringSpecTask ends the recurring task on stream: later ticks
// start nothing. The task it started last is left to run. Whoever may
// cancel its tasks may stop it: its creator, its reviewer, a manager of
// its planner.
func (s *Store) StopRecurringSpecTask(ctx context.Context, actor, stream, reason string) error {
	err := s.write(ctx, func(tx *gorm.DB) error {
		var r recurrenceRow
		if err := tx.Where("stream_id = ?", stream).Take(&r).Error; err != nil {
			return notFoundOr(err, "recurring spec task", stream)
		}
		var t domain.SpecTask
		if err := json.Unmarshal([]byte(r.Template), &t); err != nil {
			return err
		}
		if actor != r.CreatedBy && actor != t.Reviewer {
			if err := newAuthz(tx).manages(actor, t.Planner); err != nil {
				return err
			}
		}
		if r.StoppedAt != nil {
			return nil
		}
		now := s.Now()
		if err := tx.Model(&recurrenceRow{}).Where("stream_id = ?", stream).Updates(map[string]any{"stopped_at": &now, "stopped_by": actor}).Error; err != nil {
			return err
		}
		return s.audit(tx, Change{Action: "stop_recurring_spec_task", Actor: actor, Target: stream, After: map[string]string{"reason": reason}})
	})
	if err != nil {
		return fmt.Errorf("stop recurring spec task %s: %w", stream, err)
	}
	return nil
}
