package store

import (
	"encoding/json"
	"fmt"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

// Change is one org mutation as recorded on s-org: who did what to which
// record, with the record before and after.
type Change struct {
	Action string `json:"action"`
	Actor  string `json:"actor"`
	Target string `json:"target"`
	Before any    `json:"before,omitempty"`
	After  any    `json:"after,omitempty"`
}

// audit appends the change to s-org inside the mutation's own transaction,
// so the trail can never disagree with the graph.
func (s *Store) audit(tx *gorm.DB, c Change) error {
	_, err := s.auditEvent(tx, c)
	return err
}

// auditEvent is audit returning the stored event, for callers that hang
// more work off it (a hire trigger).
func (s *Store) auditEvent(tx *gorm.DB, c Change) (domain.Event, error) {
	extra, err := json.Marshal(c)
	if err != nil {
		return domain.Event{}, fmt.Errorf("encode audit: %w", err)
	}
	actor := c.Actor
	if actor == "" {
		actor = "operator"
	}
	msg := domain.Message{
		From:            actor,
		Subject:         c.Action + " " + c.Target,
		Body:            fmt.Sprintf("%s: %s %s", actor, c.Action, c.Target),
		BodyContentType: "text/plain",
		Extra:           extra,
	}
	return s.appendTx(tx, domain.Event{StreamID: domain.StreamOrg, Source: c.Actor, Message: msg}, AppendOptions{})
}
