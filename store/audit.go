package store

import (
	"bytes"
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
	// Omitted says why Before and After are missing: the record was too
	// large for an event's extra (a role of pathological markdown).
	Omitted string `json:"omitted,omitempty"`
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
	extra, err := encodeChange(c)
	if err != nil {
		return domain.Event{}, err
	}
	if len(extra) > domain.MaxExtra {
		// The change itself is valid; only its record is too large. Say
		// so rather than refuse the change or break the trail.
		c.Before, c.After = nil, nil
		c.Omitted = fmt.Sprintf("the record (%d bytes) is over the %d-byte limit of extra; read the %s itself", len(extra), domain.MaxExtra, c.Target)
		if extra, err = encodeChange(c); err != nil {
			return domain.Event{}, err
		}
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

// encodeChange renders a change without HTML escaping: role markdown full
// of <, > and & would otherwise grow sixfold.
func encodeChange(c Change) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(c); err != nil {
		return nil, fmt.Errorf("encode audit: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
