package domain

import (
	"encoding/json"
	"fmt"
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

// Validate checks a message against a body limit (<= 0 means the default)
// and every other field against its fixed limit (Limits).
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
	return m.Limits()
}

// Limits checks every field but the body against its fixed limit. The
// store applies it to every append, whoever appends; the body's limit is
// configurable and so is checked by each caller with its own setting.
func (m Message) Limits() error {
	if err := firstErr(
		checkLen("from", m.From, MaxAddress),
		checkCount("to", len(m.To), MaxRecipients),
		checkLen("subject", m.Subject, MaxSubject),
		// messageId first: a transport derives the thread from it.
		checkLen("messageId", m.MessageID, MaxMessageRef),
		checkLen("inReplyTo", m.InReplyTo, MaxMessageRef),
		checkLen("threadId", m.ThreadID, MaxMessageRef),
		checkLen("bodyContentType", m.BodyContentType, MaxContentType),
		checkCount("attachments", len(m.Attachments), MaxAttachments),
	); err != nil {
		return err
	}
	for i, to := range m.To {
		if err := checkLen(indexed("to", i), to, MaxAddress); err != nil {
			return err
		}
	}
	for i, a := range m.Attachments {
		if err := a.validate(indexed("attachments", i)); err != nil {
			return err
		}
	}
	if len(m.Extra) > MaxExtra {
		return Invalid("extra", "is %d bytes; the limit is %d", len(m.Extra), MaxExtra)
	}
	if len(m.Extra) > 0 && !json.Valid(m.Extra) {
		return Invalid("extra", "is not valid JSON")
	}
	return CheckJSONDepth("extra", m.Extra)
}

func (a Attachment) validate(field string) error {
	if a.Name == "" {
		return Invalid(field+".name", "is required")
	}
	return firstErr(
		checkLen(field+".name", a.Name, MaxAttachmentName),
		checkLen(field+".contentType", a.ContentType, MaxContentType),
		checkLen(field+".ref", a.Ref, MaxAttachmentRef),
	)
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
	// Depth counts AI runs between this event and a human, inbound or
	// system event (depth 0); the store sets it, so loops can be cut.
	Depth     int       `json:"depth,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
	Message   Message   `json:"message"`
	// Label is where the event came from and who its writer had read for
	// (Label); the store sets it, and its stream narrows its readers.
	Label Label `json:"label,omitzero"`
	// Undecodable says why the stored message could not be read (stored
	// before a limit held, or damaged): Message.Body then holds the stored
	// text as it is, so one such event never breaks a page or a read.
	Undecodable string `json:"undecodable,omitempty"`
}

// DropDeepExtra leaves out an extra nested deeper than MaxJSONDepth,
// stored before that limit held, saying so in Undecodable: MCP clients
// stop decoding at 1,000 levels (the go-sdk's limit), so such an extra
// would break every read that returned it.
func (e *Event) DropDeepExtra() {
	if CheckJSONDepth("extra", e.Message.Extra) != nil {
		e.Undecodable = fmt.Sprintf("its extra (%d bytes of JSON) nests more than %d levels deep and is left out", len(e.Message.Extra), MaxJSONDepth)
		e.Message.Extra = nil
	}
}

// UndecodableMessage is how an event shows a stored message it cannot
// read: the stored text as a plain body, and the reason.
func UndecodableMessage(raw []byte, err error) (Message, string) {
	return Message{Body: string(raw), BodyContentType: "text/plain"}, "the stored message cannot be read (" + err.Error() + "); its stored text is shown as the body"
}
