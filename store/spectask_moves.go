package store

import (
	"encoding/json"
	"fmt"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

// itemMove is the extra of an event on a task's stream telling that one
// of its items moved: handed out, claimed, reported, taken back, added by
// a re-plan. With the transitions beside it the stream tells the whole
// board, so whoever watches the task (a person on the web UI, a worker
// following it) sees items move as they do.
type itemMove struct {
	Task   string           `json:"task"`
	Item   int              `json:"item"`
	State  domain.ItemState `json:"state"`
	Worker string           `json:"worker,omitempty"`
}

// itemMovedTx appends an item's move to its task's stream, in the
// transaction that moved it.
func (s *Store) itemMovedTx(tx *gorm.DB, task, actor string, it domain.TaskItem) error {
	extra, err := json.Marshal(itemMove{Task: task, Item: it.Seq, State: it.State, Worker: it.Worker})
	if err != nil {
		return fmt.Errorf("encode item move: %w", err)
	}
	subject := fmt.Sprintf("%s: item %d %s", task, it.Seq, it.State)
	body := fmt.Sprintf("Item %d, %q, is %s", it.Seq, it.Title, it.State)
	if it.Worker != "" {
		subject += " (" + it.Worker + ")"
		body += " with " + it.Worker
	}
	_, err = s.appendTx(tx, domain.Event{StreamID: domain.TaskStream(task), Source: actor, Message: domain.Message{
		From: "helix-org", Subject: subject, Body: body + ".", BodyContentType: "text/plain", Extra: extra}}, AppendOptions{})
	return err
}
