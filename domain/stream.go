package domain

import (
	"strings"
	"time"
)

// Well-known system streams.
const (
	// StreamOrg carries the audit trail of every org mutation.
	StreamOrg = "s-org"
	// ActivationStreamPrefix + worker id is that worker's activation log.
	ActivationStreamPrefix = "s-activations-"
	// DMStreamPrefix starts every direct-message stream.
	DMStreamPrefix = "s-dm-"
	// InboxStreamPrefix + worker id is that worker's inbox: what the
	// system asks of or tells it (approval requests and their outcomes,
	// budget and loop incidents). Only the system writes there.
	InboxStreamPrefix = "s-inbox-w-"
	// ContactStreamPrefix + worker id is the stream a person's contact
	// channel runs on: copies of their DMs and of what names them go out
	// there, and their answers come in there.
	ContactStreamPrefix = "s-contact-"
)

// InboxStream is the id of a worker's inbox stream.
func InboxStream(worker string) string {
	return InboxStreamPrefix + strings.TrimPrefix(worker, PrefixWorker)
}

// ReservedStreamPrefixes start the ids of streams only the system creates.
var ReservedStreamPrefixes = []string{DMStreamPrefix, ActivationStreamPrefix, InboxStreamPrefix, ContactStreamPrefix, taskStreamPrefix}

// ReservedStreamIDs are the ids of the system's own single streams.
var ReservedStreamIDs = []string{StreamOrg}

// Stream is a named pub/sub channel.
type Stream struct {
	ID          string    `json:"id" jsonschema:"the stream's id (s-…)"`
	Name        string    `json:"name" jsonschema:"the stream's name"`
	Description string    `json:"description,omitempty" jsonschema:"what the stream is for, shown to its readers"`
	Transport   Transport `json:"transport" jsonschema:"where its events go or come from: local, or a kind with its config, secrets shown as ********"`
	CreatedBy   string    `json:"createdBy,omitempty" jsonschema:"the worker who made it (w-…); none when the operator did"`
	CreatedAt   time.Time `json:"createdAt" jsonschema:"when it was made (RFC 3339)"`
	// Private streams are read only by their members: what is on them
	// may be written on only where all its readers are among them.
	Private bool `json:"private,omitempty" jsonschema:"readable only by its members"`
	// ArchivedAt is set once the stream is archived (archive_stream): it
	// takes nothing new, and its history stays.
	ArchivedAt *time.Time `json:"archivedAt,omitempty" jsonschema:"when it was archived (RFC 3339): since then it takes no new events or subscribers and sends nothing, and its events stay readable; absent while it is in use"`
}

// StreamArchived is the refusal of a new event or subscriber on archived
// stream id: an ErrInvalid of field that is also ErrGone, so an inbound
// sender is answered 410 Gone and stops.
func StreamArchived(field, id string) error {
	msg := id + " is archived: it takes no new events or subscribers and sends nothing; its events stay readable"
	return &goneError{FieldError{Field: field, Msg: msg}}
}

// Validate checks a stream's own fields before storing; its transport is
// checked against the binary's Transports.
func (s Stream) Validate() error {
	if s.ID != "" {
		if err := ValidateID("id", PrefixStream, s.ID); err != nil {
			return err
		}
	}
	if strings.TrimSpace(s.Name) == "" {
		return Required("name")
	}
	if err := firstErr(checkLen("name", s.Name, MaxName), checkLen("description", s.Description, MaxDescription)); err != nil {
		return err
	}
	return nil
}
