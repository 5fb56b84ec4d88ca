package store

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

// The learn step of a spec task. While a task runs, every item that
// blocks or whose run ends without a report leaves a lesson: the item as
// it was, who worked it, the run and the error. When the task ends (done
// or cancelled), or when its reviewer asks, each item with lessons becomes
// one question in the reviewer's inbox quoting that evidence and what
// happened next, and one failure insight for the builders' role; the
// reviewer's answer (store_insight with the question) becomes a
// user-provided insight. A re-plan deletes the blocked item, which is why
// the lessons keep their own copy of it.

// Lesson kinds: the item was blocked, or a run ended without reporting it.
const (
	lessonBlocked = "blocked"
	lessonRetried = "retried"
)

type itemLessonRow struct {
	ID         int64  `gorm:"primaryKey;autoIncrement"`
	TaskID     string `gorm:"not null;index"`
	Seq        int    `gorm:"not null"`
	Kind       string `gorm:"not null"`
	Title      string `gorm:"not null"`
	Situation  string `gorm:"not null"`
	Files      string
	Verify     string
	Worker     string
	RunID      string
	Error      string `gorm:"not null"`
	ReplacedBy string // JSON: the items a re-plan put in its place
	At         time.Time
}

func (itemLessonRow) TableName() string { return "spec_task_lessons" }

// recordLessonTx notes that an item blocked or was retried.
func (s *Store) recordLessonTx(tx *gorm.DB, task string, it domain.TaskItem, kind, worker, run, errText string) error {
	situation := it.Title
	if d := strings.TrimSpace(it.Description); d != "" {
		situation += ". " + d
	}
	if len(situation) > maxSituation {
		situation = situation[:maxSituation] + "…"
	}
	row := itemLessonRow{TaskID: task, Seq: it.Seq, Kind: kind, Title: it.Title, Situation: situation, Files: strings.Join(it.Files, ", "),
		Verify: it.Verify, Worker: worker, RunID: run, Error: errText, At: s.Now()}
	if err := tx.Create(&row).Error; err != nil {
		return fmt.Errorf("lesson of %s: %w", itemID(task, it.Seq), err)
	}
	return nil
}

// handoutRun is the run woken by an item's hand-out, if one claimed it.
func handoutRun(tx *gorm.DB, task string, seq int, worker string) (string, error) {
	var runs []string
	err := tx.Model(&triggerRow{}).Where("worker_id = ? AND activation_id <> '' AND event_seq = (SELECT handout_seq FROM spec_task_items WHERE task_id = ? AND seq = ?)",
		worker, task, seq).Pluck("activation_id", &runs).Error
	if err != nil || len(runs) == 0 {
		return "", err
	}
	return runs[0], nil
}

// replacedTx notes which items a re-plan put in place of a blocked one.
func replacedTx(tx *gorm.DB, task string, old int, added []int) error {
	by, _ := json.Marshal(added)
	return tx.Model(&itemLessonRow{}).Where("task_id = ? AND seq = ?", task, old).Update("replaced_by", string(by)).Error
}

// LearnTask runs the learn step of a task now: its reviewer (or the owner)
// is asked about each item with lessons not asked about before.
func (s *Store) LearnTask(ctx context.Context, actor, task string) ([]domain.LearnQuestion, error) {
	var out []domain.LearnQuestion
	err := s.write(ctx, func(tx *gorm.DB) error {
		row, err := lockTask(tx, task)
		if err != nil {
			return err
		}
		if actor != row.Reviewer && actor != OwnerWorker {
			return domain.Forbidden("only the reviewer %s (or %s) learns from %s", row.Reviewer, OwnerWorker, task)
		}
		out, _, err = s.learnTaskTx(tx, row, "")
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("learn from %s: %w", task, err)
	}
	return out, nil
}

// learnTaskTx asks the reviewer one question per item with lessons and
// stores what the lessons say as a failure insight for the builders.
// It returns the questions asked and the failure insights stored.
func (s *Store) learnTaskTx(tx *gorm.DB, row specTaskRow, causedBy string) ([]domain.LearnQuestion, []string, error) {
	var lessons []itemLessonRow
	if err := tx.Where("task_id = ?", row.ID).Order("id").Find(&lessons).Error; err != nil {
		return nil, nil, fmt.Errorf("lessons of %s: %w", row.ID, err)
	}
	items, err := taskItems(tx, row.ID)
	if err != nil {
		return nil, nil, err
	}
	var out []domain.LearnQuestion
	var stored []string
	for _, seq := range lessonSeqs(lessons) {
		var mine []itemLessonRow
		for _, l := range lessons {
			if l.Seq == seq {
				mine = append(mine, l)
			}
		}
		q, auto, err := s.askItemTx(tx, row, mine, items, causedBy)
		if err != nil {
			return nil, nil, err
		}
		if auto != "" {
			out, stored = append(out, q), append(stored, auto)
		}
	}
	return out, stored, nil
}

func lessonSeqs(lessons []itemLessonRow) []int {
	var seqs []int
	for _, l := range lessons {
		if !slices.Contains(seqs, l.Seq) {
			seqs = append(seqs, l.Seq)
		}
	}
	return seqs
}

// askItemTx asks about one item, unless it was asked about before; it
// returns the question and the failure insight stored ("" when not asked).
func (s *Store) askItemTx(tx *gorm.DB, row specTaskRow, lessons []itemLessonRow, items []domain.TaskItem, causedBy string) (domain.LearnQuestion, string, error) {
	last := lessons[len(lessons)-1]
	key := itemID(row.ID, last.Seq)
	var prior int64
	if err := tx.Model(&learnQuestionRow{}).Where("activation_id = ?", key).Count(&prior).Error; err != nil || prior > 0 {
		return domain.LearnQuestion{}, "", err
	}
	worker := lastWorker(lessons, row)
	next := whatHappened(items, lessons)
	auto, err := s.storeLessonTx(tx, row, worker, last, next)
	if err != nil {
		return domain.LearnQuestion{}, "", err
	}
	var used []string
	if last.RunID != "" {
		if err := tx.Model(&insightUseRow{}).Where("activation_id = ? AND utilized", last.RunID).Order("insight_id").Pluck("insight_id", &used).Error; err != nil {
			return domain.LearnQuestion{}, "", err
		}
	}
	q := learnQuestionRow{ID: "q-" + domain.RandomSlug(10), ActivationID: key, RunID: last.RunID, TaskID: row.ID, ItemSeq: last.Seq,
		WorkerID: worker, Reviewer: row.Reviewer, Situation: last.Situation, Error: last.Error, Used: strings.Join(used, " "), AskedAt: s.Now()}
	ev, err := s.notifyTx(tx, row.Reviewer, domain.Message{Subject: fmt.Sprintf("What should builders do next time? (%s item %d, %s)", row.ID, last.Seq, q.ID),
		Body: itemQuestionBody(tx, row, q, lessons, next, auto), BodyContentType: "text/markdown"}, causedBy)
	if err != nil {
		return domain.LearnQuestion{}, "", err
	}
	q.Notice = ev.ID
	if err := tx.Create(&q).Error; err != nil {
		return domain.LearnQuestion{}, "", fmt.Errorf("record question %s: %w", q.ID, err)
	}
	return q.toDomain(), auto.ID, nil
}

// lastWorker is who last worked the item, else the task's first builder:
// the answer is stored for that worker's role.
func lastWorker(lessons []itemLessonRow, row specTaskRow) string {
	for i := len(lessons) - 1; i >= 0; i-- {
		if lessons[i].Worker != "" {
			return lessons[i].Worker
		}
	}
	return row.toDomain().Builders[0]
}

// outcome is what became of a troubled item: delivered by whom with what
// summary (itself on a later try, or the items that replaced it).
type outcome struct {
	Seq              int
	Title, By, Words string
}

// whatHappened follows an item through its replacements to what was
// delivered in its place.
func whatHappened(items []domain.TaskItem, lessons []itemLessonRow) []outcome {
	seqs := []int{lessons[0].Seq}
	for _, l := range lessons {
		var by []int
		if json.Unmarshal([]byte(l.ReplacedBy), &by) == nil && len(by) > 0 {
			seqs = by
		}
	}
	var out []outcome
	for _, it := range items {
		if slices.Contains(seqs, it.Seq) && it.State == domain.ItemDone {
			out = append(out, outcome{Seq: it.Seq, Title: it.Title, By: it.Worker, Words: it.Summary})
		}
	}
	return out
}

// storeLessonTx stores the failure the lessons show, for the builder's
// role, as the reviewer: the reviewer may correct it. Nothing here may
// fail the transition that ends the task for want of a seat.
func (s *Store) storeLessonTx(tx *gorm.DB, row specTaskRow, worker string, last itemLessonRow, next []outcome) (domain.Insight, error) {
	scope, target := domain.ScopeRole, ""
	if seat, err := insightSeat(tx, worker); err == nil {
		target = seat.Role
	} else {
		scope = domain.ScopeOrg // a builder dismissed since: the lesson is still the org's
	}
	res := "It blocked: " + last.Error
	for _, o := range next {
		res += fmt.Sprintf("; item %d (%s) then delivered: %s", o.Seq, o.Title, o.Words)
	}
	if len(res) > domain.MaxInsightText {
		res = res[:domain.MaxInsightText-len("…")] + "…"
	}
	in := domain.Insight{ID: s.newInsightID(), Version: 1, Trigger: last.Situation, Resolution: res,
		Type: domain.InsightFailure, Tags: []string{"spec-task", row.ID}, Scope: scope, Target: target, StoredBy: row.Reviewer}
	if err := in.Validate(); err != nil {
		return domain.Insight{}, err
	}
	r, err := s.insertInsight(tx, in)
	if err != nil {
		return domain.Insight{}, err
	}
	return r.toDomain(), nil
}

// itemQuestionBody quotes the evidence and offers the answers it supports.
func itemQuestionBody(tx *gorm.DB, row specTaskRow, q learnQuestionRow, lessons []itemLessonRow, next []outcome, auto domain.Insight) string {
	last := lessons[len(lessons)-1]
	var b strings.Builder
	fmt.Fprintf(&b, "Spec task %s, %q, is %s. Item %d (%s) was %s: %s\n\n", row.ID, row.Title, row.State, last.Seq, last.Title,
		map[string]string{lessonBlocked: "blocked", lessonRetried: "left unreported by a run"}[last.Kind], last.Error)
	fmt.Fprintf(&b, "It was working on: %s\n", last.Situation)
	for _, d := range [][2]string{{"Files", last.Files}, {"Verify", last.Verify}} {
		if d[1] != "" {
			fmt.Fprintf(&b, "%s: %s\n", d[0], d[1])
		}
	}
	b.WriteString("\nWhat happened:\n")
	for _, l := range lessons {
		fmt.Fprintf(&b, "- %s by %s", l.Kind, orNobody(l.Worker))
		if l.RunID != "" {
			fmt.Fprintf(&b, " in run %s", l.RunID)
		}
		fmt.Fprintf(&b, ": %s\n", l.Error)
	}
	for _, o := range next {
		fmt.Fprintf(&b, "- item %d (%s) was delivered by %s: %s\n", o.Seq, o.Title, orNobody(o.By), o.Words)
	}
	if len(next) == 0 {
		b.WriteString("- nothing was delivered in its place\n")
	}
	used := strings.Fields(q.Used)
	for _, id := range used {
		if in, err := getInsight(tx, id); err == nil {
			fmt.Fprintf(&b, "The run followed %s: when %s → %s\n", id, in.Trigger, in.Resolution)
		}
	}
	fmt.Fprintf(&b, "\nStored for %s's role as %s (failure): %s\n", q.WorkerID, auto.ID, auto.Resolution)
	fmt.Fprintf(&b, "\nAnswer with one of:\n1. what to do next time: store_insight {\"question\": %q, \"resolution\": \"…\", \"type\": \"pattern\"} (tagged %s)\n",
		q.ID, domain.TagUserProvided)
	n := 2
	for _, o := range next {
		fmt.Fprintf(&b, "%d. what item %d did is the way: store_insight {\"question\": %q, \"resolution\": %q, \"type\": \"pattern\"}\n", n, o.Seq, q.ID, o.Words)
		n++
	}
	for _, id := range used {
		fmt.Fprintf(&b, "%d. the advice it followed was wrong: correct_insight {\"id\": %q, \"resolution\": \"…\", \"reason\": \"…\"}\n", n, id)
		n++
	}
	fmt.Fprintf(&b, "%d. the failure stored is wrong: correct_insight {\"id\": %q, \"resolution\": \"…\", \"reason\": \"…\"} or {\"id\": %q, \"retire\": true, \"reason\": \"…\"}\n",
		n, auto.ID, auto.ID)
	return b.String()
}

func orNobody(w string) string {
	if w == "" {
		return "no one (a commit of progress.md)"
	}
	return w
}
