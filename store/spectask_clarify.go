package store

import (
	"encoding/json"
	"fmt"
	"slices"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

// A planner unsure of what the prompt means asks instead of guessing:
// ask_human with expectsReply and the task. The task then waits —
// submit_spec is refused — until the person answers; the question and
// the answer are each an event on the task's stream, and the answer wakes
// the planner on its direct-message stream, quoting the question.

// clarifyStates are where a planner may ask: while it writes the spec.
var clarifyStates = []domain.TaskState{domain.TaskSpecGeneration, domain.TaskSpecRevision}

// clarifyMove is the extra of a clarifying question's events on the
// task's stream.
type clarifyMove struct {
	Task     string `json:"task"`
	Clarify  string `json:"clarify"` // "asked" or "answered"
	Question string `json:"question"`
	Person   string `json:"person"`
	Answer   string `json:"answer,omitempty"`
}

// checkClarifyTx refuses a clarifying question the task cannot wait for.
func checkClarifyTx(tx *gorm.DB, a Ask) (specTaskRow, error) {
	row, err := lockTask(tx, a.Task)
	if err != nil {
		return row, err
	}
	switch {
	case a.Asker != row.Planner:
		return row, domain.Forbidden("only the planner %s asks a clarifying question for %s", row.Planner, row.ID)
	case !a.ExpectsReply:
		return row, domain.Invalid("expectsReply", "a question for task %s waits for its answer: set expectsReply", row.ID)
	case !slices.Contains(clarifyStates, domain.TaskState(row.State)):
		return row, fmt.Errorf("%w: %s is in state %q; the planner asks while it writes the spec (%q, %q)", domain.ErrConflict,
			row.ID, row.State, domain.TaskSpecGeneration, domain.TaskSpecRevision)
	case row.Asking != "":
		return row, fmt.Errorf("%w: %s already waits for the answer to %s", domain.ErrConflict, row.ID, row.Asking)
	}
	return row, nil
}

// clarifyTx makes the task wait for the question's answer.
func (s *Store) clarifyTx(tx *gorm.DB, row specTaskRow, a Ask, q domain.Event) error {
	if err := tx.Model(&specTaskRow{}).Where("id = ?", row.ID).Update("asking", q.ID).Error; err != nil {
		return err
	}
	return s.clarifyEventTx(tx, row.ID, a.Asker, clarifyMove{Task: row.ID, Clarify: "asked", Question: q.ID, Person: a.Person},
		fmt.Sprintf("%s: waiting for %s's answer", row.ID, a.Person), a.Text)
}

// answeredTx lets a task waiting for q go on once its person answered.
func (s *Store) answeredTx(tx *gorm.DB, q *questionRow, answer domain.Event) error {
	if q == nil {
		return nil
	}
	var rows []specTaskRow
	if err := tx.Where("asking = ?", q.EventID).Find(&rows).Error; err != nil {
		return err
	}
	for _, row := range rows {
		if err := tx.Model(&specTaskRow{}).Where("id = ?", row.ID).Update("asking", "").Error; err != nil {
			return err
		}
		if err := s.clarifyEventTx(tx, row.ID, answer.Source, clarifyMove{Task: row.ID, Clarify: "answered", Question: q.EventID, Person: q.Person, Answer: answer.ID},
			fmt.Sprintf("%s: %s answered", row.ID, q.Person), answer.Message.Body); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) clarifyEventTx(tx *gorm.DB, task, actor string, m clarifyMove, subject, body string) error {
	extra, _ := json.Marshal(m)
	_, err := s.appendTx(tx, domain.Event{StreamID: domain.TaskStream(task), Source: actor, Message: domain.Message{
		From: "helix-org", Subject: subject, Body: quoteCut(body, 4<<10), BodyContentType: "text/plain", Extra: extra}}, AppendOptions{})
	return err
}
