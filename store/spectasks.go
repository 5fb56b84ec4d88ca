package store

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

// Spec tasks live here whole: the task, its items and its documents, so a
// restart loses nothing. Every transition, and every notice it sends to the
// planner, reviewer or a builder, commits in one transaction, which is also
// what keeps an item from being handed to two workers at once.

type specTaskRow struct {
	ID       string `gorm:"primaryKey"`
	Title    string `gorm:"not null"`
	Prompt   string `gorm:"not null"`
	Priority int
	State    string `gorm:"not null;index"`
	Repo     string
	Origin   string
	Planner  string `gorm:"not null"`
	Reviewer string `gorm:"not null"`
	Builders string `gorm:"not null"`
	// Explorers is a JSON list, empty when the builders explore.
	Explorers string `gorm:"not null;default:''"`
	Parallel  int    `gorm:"not null"`
	// PullRequests is the task's domain.PullRequestMode.
	PullRequests string `gorm:"not null;default:'none'"`
	Revisions    int
	Comments     string
	// AddItems is set while the reviewer's changes to the built work wait
	// for the planner's new items, so a replayed submit adds none twice.
	AddItems bool
	// Asking is the planner's clarifying question (its event id) while it
	// waits for the answer; submit_spec waits with it.
	Asking       string `gorm:"not null;default:''"`
	Requirements string
	Design       string
	// DocsLabel joins the labels of whoever wrote the documents.
	DocsLabel string `gorm:"not null;default:''"`
	CreatedBy string
	CreatedAt time.Time
	UpdatedAt time.Time
}

func (specTaskRow) TableName() string { return "spec_tasks" }

func (r specTaskRow) toDomain() domain.SpecTask {
	t := domain.SpecTask{ID: r.ID, Title: r.Title, Prompt: r.Prompt, Priority: r.Priority, State: domain.TaskState(r.State),
		Repo: r.Repo, Origin: r.Origin, Planner: r.Planner, Reviewer: r.Reviewer, Parallel: r.Parallel, Revisions: r.Revisions,
		PullRequests: domain.PullRequestMode(r.PullRequests),
		Comments:     r.Comments, CreatedBy: r.CreatedBy, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
	json.Unmarshal([]byte(r.Builders), &t.Builders)
	json.Unmarshal([]byte(r.Explorers), &t.Explorers)
	return t
}

// SpecTaskView is a task with its documents and items, as get_spec_task
// shows it.
type SpecTaskView struct {
	Task  domain.SpecTask     `json:"task"`
	Docs  domain.TaskDocs     `json:"docs"`
	Items []domain.TaskItem   `json:"items"`
	Fleet []domain.FleetEntry `json:"fleet"`
	// Exploration is each explorer's partition of the repository and what
	// it found; none for a task without one.
	Exploration []domain.ExplorePart `json:"exploration,omitempty"`
	// Asking is the planner's open clarifying question, if it waits for one.
	Asking string `json:"asking,omitempty"`
}

// CreateSpecTask records a task and starts it: the planner is woken with
// the prompt to write the spec. The creator must manage the planner and
// every builder; the reviewer (the owner when not named) must be a person.
func (s *Store) CreateSpecTask(ctx context.Context, actor string, t domain.SpecTask) (domain.SpecTask, error) {
	return s.StartSpecTask(ctx, actor, t, TaskStart{})
}

// StartSpecTask is CreateSpecTask for a task whose repository was looked
// at: one with files starts exploring instead, start's partitions going
// to their explorers, and the planner is woken once every one is in
// (spectask_explore.go).
func (s *Store) StartSpecTask(ctx context.Context, actor string, t domain.SpecTask, start TaskStart) (domain.SpecTask, error) {
	if err := defaultTask(&t); err != nil {
		return domain.SpecTask{}, err
	}
	err := s.write(ctx, func(tx *gorm.DB) error {
		var err error
		t.ID, err = s.createSpecTaskTx(tx, actor, t, WritingLabel(ctx).Encode(), start)
		return err
	})
	if err != nil {
		return domain.SpecTask{}, fmt.Errorf("create spec task: %w", err)
	}
	return s.getSpecTask(s.read(ctx), t.ID)
}

// defaultTask fills what a task leaves out and checks it.
func defaultTask(t *domain.SpecTask) error {
	if t.Reviewer == "" {
		t.Reviewer = OwnerWorker
	}
	if t.Parallel == 0 {
		t.Parallel = domain.DefaultTaskParallel
	}
	return t.Validate()
}

// createSpecTaskTx records a checked task and starts it, its documents
// labelled docsLabel; it returns the task's id.
func (s *Store) createSpecTaskTx(tx *gorm.DB, actor string, t domain.SpecTask, docsLabel string, start TaskStart) (string, error) {
	if err := checkTaskPeople(tx, actor, t); err != nil {
		return "", err
	}
	id, err := pickID(tx, &specTaskRow{}, "spec task", domain.PrefixTask, t.ID, t.Title)
	if err != nil {
		return "", err
	}
	builders, _ := json.Marshal(t.Builders)
	var explorers []byte
	if len(t.Explorers) > 0 {
		explorers, _ = json.Marshal(t.Explorers)
	}
	now := s.Now()
	row := specTaskRow{ID: id, Title: t.Title, Prompt: t.Prompt, Priority: t.Priority, State: string(domain.TaskBacklog),
		Repo: t.Repo, Origin: t.Origin, Planner: t.Planner, Reviewer: t.Reviewer, Builders: string(builders), Explorers: string(explorers), Parallel: t.Parallel,
		PullRequests: string(cmp.Or(t.PullRequests, domain.PullRequestsNone)),
		Requirements: "# " + t.Title + "\n\n" + t.Prompt + "\n", CreatedBy: actor, CreatedAt: now, UpdatedAt: now,
		DocsLabel: docsLabel}
	if err := tx.Create(&row).Error; err != nil {
		return "", err
	}
	if err := s.createTaskStreamTx(tx, row); err != nil {
		return "", err
	}
	if len(start.Parts) > 0 {
		return id, s.exploreTx(tx, row, actor, start.Parts)
	}
	note := "Spec generation started for: " + t.Title
	if start.Greenfield {
		note += "\n\nThe repository has no files yet (greenfield): nothing to explore."
	}
	ev, err := s.moveTx(tx, &row, actor, domain.ActStart, note)
	if err != nil {
		return "", err
	}
	return id, s.askPlannerTx(tx, row, ev.ID, "")
}

// askPlannerTx wakes the planner to write the spec, with what the
// exploration found when there was one.
func (s *Store) askPlannerTx(tx *gorm.DB, row specTaskRow, causedBy, exploration string) error {
	return s.notifyTaskTx(tx, row.Planner, row, causedBy, "write the spec", fmt.Sprintf(
		"You plan spec task %s, %q.\n\n## Prompt\n\n%s\n\n%sWrite the design and the items (each with a title, and blockedBy "+
			"for the items it needs first; delta, framework, idioms, verify and budget where they help the builder) and send them with submit_spec. "+
			"If the prompt leaves a decision open, ask the reviewer %s with ask_human (expectsReply, task %q) instead of guessing: the task waits for the answer.",
		row.ID, row.Title, row.Prompt, exploration, row.Reviewer, row.ID))
}

// checkTaskPeople checks that the named workers exist, that the actor
// manages the planner and the builders, and that the reviewer is a person.
func checkTaskPeople(tx *gorm.DB, actor string, t domain.SpecTask) error {
	a := newAuthz(tx)
	for _, w := range slices.Concat([]string{t.Planner}, t.Builders, t.Explorers) {
		if ok, err := exists(tx.Where("dismissed_at IS NULL"), &workerRow{}, w); err != nil || !ok {
			return orNotFound(err, "worker", w)
		}
		if err := a.manages(actor, w); err != nil {
			return err
		}
	}
	var rev workerRow
	if err := tx.Where("id = ? AND dismissed_at IS NULL", t.Reviewer).Take(&rev).Error; err != nil {
		return notFoundOr(err, "worker", t.Reviewer)
	}
	if rev.Kind != string(domain.WorkerHuman) {
		return domain.Invalid("reviewer", "%s is an AI worker; the reviewer must be a person", t.Reviewer)
	}
	return nil
}

// createTaskStreamTx makes s-task-<id>, followed by the reviewer and a
// human creator so they watch it; AI workers are told by their inboxes
// instead, so a transition never wakes a whole team.
func (s *Store) createTaskStreamTx(tx *gorm.DB, t specTaskRow) error {
	id := domain.TaskStream(t.ID)
	st := streamRow{ID: id, Name: "task " + t.ID, Description: "Transitions of spec task " + t.ID + ": " + t.Title,
		TransportKind: string(domain.TransportLocal), TransportConfig: "{}", CreatedAt: s.Now()}
	if err := tx.Create(&st).Error; err != nil {
		return err
	}
	var humans []string
	if err := tx.Model(&workerRow{}).Where("id IN ? AND kind = ?", []string{t.Reviewer, t.CreatedBy}, string(domain.WorkerHuman)).
		Pluck("id", &humans).Error; err != nil {
		return err
	}
	for _, w := range humans {
		if err := tx.Create(&subscriptionRow{WorkerID: w, StreamID: id, CreatedAt: s.Now()}).Error; err != nil {
			return err
		}
	}
	return nil
}

// taskTransition is the extra of a transition event.
type taskTransition struct {
	Task   string            `json:"task"`
	Action domain.TaskAction `json:"action"`
	From   domain.TaskState  `json:"from"`
	To     domain.TaskState  `json:"to"`
	Actor  string            `json:"actor,omitempty"`
}

// moveTx takes an action on a task: the state machine decides, the row is
// updated, and the transition is told on the task's stream and on s-org.
func (s *Store) moveTx(tx *gorm.DB, row *specTaskRow, actor string, act domain.TaskAction, note string) (domain.Event, error) {
	from := domain.TaskState(row.State)
	next, err := from.Next(act)
	if err != nil {
		return domain.Event{}, fmt.Errorf("spec task %s: %w", row.ID, err)
	}
	row.State, row.UpdatedAt = string(next), s.Now()
	if err := tx.Model(&specTaskRow{}).Where("id = ?", row.ID).Updates(map[string]any{"state": row.State, "updated_at": row.UpdatedAt}).Error; err != nil {
		return domain.Event{}, err
	}
	tr := taskTransition{Task: row.ID, Action: act, From: from, To: next, Actor: actor}
	extra, _ := json.Marshal(tr)
	ev, err := s.appendTx(tx, domain.Event{StreamID: domain.TaskStream(row.ID), Source: actor, Message: domain.Message{
		From: "helix-org", Subject: fmt.Sprintf("%s: %s → %s", row.ID, from, next), Body: note, Extra: extra}}, AppendOptions{})
	if err != nil {
		return ev, err
	}
	return ev, s.audit(tx, Change{Action: "spec_task_" + string(act), Actor: actor, Target: row.ID, After: tr})
}

// taskNotice is the extra of a notice to a planner, reviewer or builder.
type taskNotice struct {
	Task string `json:"task"`
	Ask  string `json:"ask"`
	Item int    `json:"item,omitempty"`
}

// notifyTaskTx wakes a worker about a task through its inbox.
func (s *Store) notifyTaskTx(tx *gorm.DB, worker string, t specTaskRow, causedBy, ask, body string) error {
	_, err := s.notifyItemTx(tx, worker, t, causedBy, ask, 0, body)
	return err
}

// A notice about a task quotes its documents, so it carries their label.
func (s *Store) notifyItemTx(tx *gorm.DB, worker string, t specTaskRow, causedBy, ask string, item int, body string) (domain.Event, error) {
	extra, _ := json.Marshal(taskNotice{Task: t.ID, Ask: ask, Item: item})
	return s.notifyLabelTx(tx, worker, domain.Message{Subject: fmt.Sprintf("Spec task %s: %s", t.ID, ask), Body: body,
		BodyContentType: "text/markdown", Extra: extra}, causedBy, storedLabel(t.DocsLabel))
}

// labelDocsTx joins the label of what is being written (the context's
// Writing label) into the label of the task's documents.
func labelDocsTx(tx *gorm.DB, row *specTaskRow) error {
	l := WritingLabel(tx.Statement.Context)
	if l.IsZero() {
		return nil
	}
	next := storedLabel(row.DocsLabel).Join(l).Encode()
	if next == row.DocsLabel {
		return nil
	}
	row.DocsLabel = next
	return tx.Model(&specTaskRow{}).Where("id = ?", row.ID).Update("docs_label", next).Error
}

// GetSpecTask returns a task with its documents, items and who works on what.
func (s *Store) GetSpecTask(ctx context.Context, id string) (SpecTaskView, error) {
	db := s.read(ctx)
	var row specTaskRow
	if err := db.Where("id = ?", id).Take(&row).Error; err != nil {
		return SpecTaskView{}, notFoundOr(err, "spec task", id)
	}
	items, err := taskItems(db, id)
	if err != nil {
		return SpecTaskView{}, fmt.Errorf("items of %s: %w", id, err)
	}
	t := row.toDomain()
	docs := domain.TaskDocs{Requirements: row.Requirements, Design: row.Design, Label: storedLabel(row.DocsLabel)}
	if len(items) > 0 {
		docs.Progress = domain.RenderChecklist(t.Title, items)
	}
	parts, err := explorations(db, id)
	if err != nil {
		return SpecTaskView{}, fmt.Errorf("exploration of %s: %w", id, err)
	}
	return SpecTaskView{Task: t, Docs: docs, Items: orEmptyItems(items), Fleet: domain.Fleet(items, s.Now()), Exploration: parts, Asking: row.Asking}, nil
}

func orEmptyItems(items []domain.TaskItem) []domain.TaskItem {
	if items == nil {
		return []domain.TaskItem{}
	}
	return items
}

func (s *Store) getSpecTask(db *gorm.DB, id string) (domain.SpecTask, error) {
	var row specTaskRow
	if err := db.Where("id = ?", id).Take(&row).Error; err != nil {
		return domain.SpecTask{}, notFoundOr(err, "spec task", id)
	}
	return row.toDomain(), nil
}

// SpecTaskSummary is one line of list_spec_tasks: a task and its progress.
type SpecTaskSummary struct {
	ID       string           `json:"id"`
	Title    string           `json:"title"`
	State    domain.TaskState `json:"state"`
	Priority int              `json:"priority"`
	Done     int              `json:"done"`
	Items    int              `json:"items"`
}

// ListSpecTasks returns every task, highest priority first, then newest.
func (s *Store) ListSpecTasks(ctx context.Context) ([]SpecTaskSummary, error) {
	var rows []specTaskRow
	if err := s.read(ctx).Order("priority DESC, created_at DESC, id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("list spec tasks: %w", err)
	}
	out := make([]SpecTaskSummary, 0, len(rows))
	for _, r := range rows {
		items, err := taskItems(s.read(ctx), r.ID)
		if err != nil {
			return nil, fmt.Errorf("items of %s: %w", r.ID, err)
		}
		done, total := domain.Progress(items)
		out = append(out, SpecTaskSummary{ID: r.ID, Title: r.Title, State: domain.TaskState(r.State), Priority: r.Priority, Done: done, Items: total})
	}
	return out, nil
}

// CancelSpecTask stops a task from any state that is not final. The
// creator, the reviewer and whoever manages the planner may cancel it.
func (s *Store) CancelSpecTask(ctx context.Context, actor, id, reason string) (domain.SpecTask, error) {
	err := s.write(ctx, func(tx *gorm.DB) error {
		row, err := lockTask(tx, id)
		if err != nil {
			return err
		}
		if !slices.Contains([]string{row.CreatedBy, row.Reviewer}, actor) {
			if err := newAuthz(tx).manages(actor, row.Planner); err != nil {
				return err
			}
		}
		ev, err := s.moveTx(tx, &row, actor, domain.ActCancel, strings.TrimSpace("Cancelled. "+reason))
		if err != nil {
			return err
		}
		// Its builders are free for other tasks' items.
		if err := tx.Model(&taskItemRow{}).Where("task_id = ? AND state = ?", id, string(domain.ItemInProgress)).
			Updates(map[string]any{"state": string(domain.ItemPending), "worker": ""}).Error; err != nil {
			return err
		}
		return s.endSessionTx(tx, row, actor, ev.ID, false)
	})
	if err != nil {
		return domain.SpecTask{}, fmt.Errorf("cancel spec task %s: %w", id, err)
	}
	return s.getSpecTask(s.read(ctx), id)
}

// lockTask reads a task inside a write transaction.
func lockTask(tx *gorm.DB, id string) (specTaskRow, error) {
	var row specTaskRow
	if err := tx.Where("id = ?", id).Take(&row).Error; err != nil {
		return row, notFoundOr(err, "spec task", id)
	}
	return row, nil
}

// WorkerItem is the spec task item a worker is on, if any, with the
// task's view (its fleet entry for that worker among them).
func (s *Store) WorkerItem(ctx context.Context, worker string) (SpecTaskView, domain.FleetEntry, bool, error) {
	var row taskItemRow
	err := s.read(ctx).Where("worker = ? AND state = ?", worker, string(domain.ItemInProgress)).Order("started_at").Limit(1).Find(&row).Error
	if err != nil || row.TaskID == "" {
		return SpecTaskView{}, domain.FleetEntry{}, false, err
	}
	view, err := s.GetSpecTask(ctx, row.TaskID)
	if err != nil {
		return view, domain.FleetEntry{}, false, err
	}
	for _, f := range view.Fleet {
		if f.Worker == worker {
			return view, f, true, nil
		}
	}
	return view, domain.FleetEntry{}, false, nil
}
