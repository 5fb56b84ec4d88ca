package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

// Stall recovery. A stalled item (blocked, nothing else ready) ends in
// one of three ways, each an event on the task's stream: the planner
// re-plans it (submit_spec with replace), the planner or the reviewer
// skips it with a reason (SkipItem), or, after MaxStallAttempts re-plans
// along one line, the server aborts: the task is blocked and the
// reviewer decides (stallTx).

// stallMove is the extra of a stall step's event.
type stallMove struct {
	Task    string `json:"task"`
	Stall   string `json:"stall"`
	Item    int    `json:"item"`
	Attempt int    `json:"attempt,omitempty"`
	Max     int    `json:"max"`
	// Added are the items a re-plan put in the item's place.
	Added  []int  `json:"added,omitempty"`
	Reason string `json:"reason,omitempty"`
}

func (s *Store) stallEventTx(tx *gorm.DB, task, actor, step string, item, attempt int, added []int, body string) (domain.Event, error) {
	m := stallMove{Task: task, Stall: step, Item: item, Attempt: attempt, Max: domain.MaxStallAttempts, Added: added}
	if step == domain.StallSkip {
		m.Reason = body
	}
	extra, _ := json.Marshal(m)
	return s.appendTx(tx, domain.Event{StreamID: domain.TaskStream(task), Source: actor, Message: domain.Message{
		From: "helix-org", Subject: fmt.Sprintf("%s: item %d %s", task, item, step), Body: quoteCut(body, 4<<10), BodyContentType: "text/plain", Extra: extra}},
		AppendOptions{})
}

// SkipItem lets the planner or the reviewer do without a blocked or
// pending item, for a stated reason: it is skipped, what waited for it
// goes on, and the task moves on (finishing if nothing else is left).
func (s *Store) SkipItem(ctx context.Context, actor, id string, seq int, reason string) (domain.TaskItem, error) {
	if strings.TrimSpace(reason) == "" {
		return domain.TaskItem{}, domain.Required("reason")
	}
	var got domain.TaskItem
	err := s.write(ctx, func(tx *gorm.DB) error {
		row, _, it, err := taskItemTx(tx, id, seq)
		if err != nil {
			return err
		}
		switch {
		case actor != row.Planner && actor != row.Reviewer:
			return domain.Forbidden("only the planner %s or the reviewer %s skips an item of %s", row.Planner, row.Reviewer, id)
		case row.State != string(domain.TaskImplementation):
			return fmt.Errorf("%w: %s is in state %q; items are skipped in %q", domain.ErrConflict, id, row.State, domain.TaskImplementation)
		case it.State != domain.ItemBlocked && it.State != domain.ItemPending:
			return fmt.Errorf("%w: item %s is %s; only a blocked or pending item is skipped", domain.ErrConflict, itemID(id, seq), it.State)
		}
		now := s.Now()
		it.State, it.Summary, it.FinishedAt = domain.ItemSkipped, "skipped: "+reason, &now
		got = it
		if err := saveItemTx(tx, id, it); err != nil {
			return err
		}
		if err := s.itemMovedTx(tx, id, actor, it); err != nil {
			return err
		}
		if _, err := s.stallEventTx(tx, id, actor, domain.StallSkip, seq, it.Replans, nil, reason); err != nil {
			return err
		}
		return s.advanceTx(tx, row, actor, "")
	})
	if err != nil {
		return domain.TaskItem{}, fmt.Errorf("skip item %s: %w", itemID(id, seq), err)
	}
	return got, nil
}
