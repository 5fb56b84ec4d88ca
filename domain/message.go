package domain

import (
	"encoding/json"
	"strings"
	"time"
)

// DefaultMaxBody is the default limit on a message body, in bytes.
const DefaultMaxBody = 256 << 10

// Message is the one canonical envelope every event carries, whatever
// transport it came from, so a role never cares where a message came from.
type Message struct {
	From            string          `json:"from,omitempty"`
	To              []string        `json:"to,omitempty"`
	Subject         string          `json:"subject,omitempty"`
	Body            string          `json:"body"`
	ThreadID        string          `json:"threadId,omitempty"`
	InReplyTo       string          `json:"inReplyTo,omitempty"`
	MessageID       string          `json:"messageId,omitempty"`
	BodyContentType string          `json:"bodyContentType,omitempty"`
	Attachments     []Attachment    `json:"attachments,omitempty"`
	Extra           json.RawMessage `json:"extra,omitempty"`
}

// Attachment describes a file carried with a message. Content is kept
// out of the envelope and retrievable by Ref.
type Attachment struct {
	Name        string `json:"name"`
	ContentType string `json:"contentType,omitempty"`
	Size        int64  `json:"size,omitempty"`
	Ref         string `json:"ref,omitempty"`
}

// Validate checks a message against a body limit (<= 0 means the default).
func (m Message) Validate(maxBody int) error {
	if maxBody <= 0 {
		maxBody = DefaultMaxBody
	}
	if strings.TrimSpace(m.Body) == "" {
		return Required("body")
	}
	if len(m.Body) > maxBody {
		return Invalid("body", "is %d bytes; the limit is %d", len(m.Body), maxBody)
	}
	if len(m.Extra) > 0 && !json.Valid(m.Extra) {
		return Invalid("extra", "is not valid JSON")
	}
	for i, a := range m.Attachments {
		if a.Name == "" {
			return Invalid("attachments", "attachment %d has no name", i)
		}
	}
	return nil
}

// SourceKind says what kind of actor appended an event.
type SourceKind string

const (
	SourceHuman  SourceKind = "human"
	SourceAI     SourceKind = "ai"
	SourceSystem SourceKind = "system"
)

// Event is one message appended to a stream. Seq increases monotonically
// across the whole store, so it doubles as a read cursor.
type Event struct {
	ID         string     `json:"id"`
	Seq        int64      `json:"seq"`
	StreamID   string     `json:"streamId"`
	Source     string     `json:"source,omitempty"`
	SourceKind SourceKind `json:"sourceKind"`
	CausedBy   string     `json:"causedBy,omitempty"`
	CreatedAt  time.Time  `json:"createdAt"`
	Message    Message    `json:"message"`
}
