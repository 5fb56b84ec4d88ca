package tools

import (
	"context"
	"encoding/json"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// envelope is the part of the Message a caller may set. Everything but the
// body is optional.
type envelope struct {
	Body            string          `json:"body" jsonschema:"the message text"`
	Subject         string          `json:"subject,omitempty" jsonschema:"a subject line, e.g. an email's"`
	To              []string        `json:"to,omitempty" jsonschema:"who the message is for: worker or position ids, or addresses on an outside stream"`
	ThreadID        string          `json:"threadId,omitempty" jsonschema:"the thread the message belongs to, to keep a reply in it"`
	InReplyTo       string          `json:"inReplyTo,omitempty" jsonschema:"the event id (e-…) or messageId this message answers"`
	MessageID       string          `json:"messageId,omitempty" jsonschema:"an id of your own for this message, for replies to name"`
	BodyContentType string          `json:"bodyContentType,omitempty" jsonschema:"the body's MIME type, e.g. text/markdown; by default text/plain"`
	Attachments     []attachmentIn  `json:"attachments,omitempty" jsonschema:"files to mention with the message, by ref"`
	Extra           json.RawMessage `json:"extra,omitempty" jsonschema:"JSON for the stream's transport beyond these fields"`
}

// attachmentIn is a file a message mentions; it has its own type so that
// its fields are described to a model (domain has no schema tags).
type attachmentIn struct {
	Name        string `json:"name" jsonschema:"the file's name"`
	ContentType string `json:"contentType,omitempty" jsonschema:"its MIME type, e.g. application/pdf"`
	Size        int64  `json:"size,omitempty" jsonschema:"its size in bytes"`
	Ref         string `json:"ref,omitempty" jsonschema:"a stored file's ref (att-…), from an event's attachments or a skill's output"`
}

func (e envelope) message(from string) domain.Message {
	var atts []domain.Attachment
	for _, a := range e.Attachments {
		atts = append(atts, domain.Attachment(a))
	}
	return domain.Message{From: from, To: e.To, Subject: e.Subject, Body: e.Body, ThreadID: e.ThreadID,
		InReplyTo: e.InReplyTo, MessageID: e.MessageID, BodyContentType: e.BodyContentType,
		Attachments: atts, Extra: e.Extra}
}

type publishIn struct {
	Stream string `json:"stream" jsonschema:"the stream to publish on (s-…)"`
	envelope
}

func publish() Tool {
	return define("publish", "Publish a message on a Stream; it wakes the stream's AI subscribers, and a transport sends it outside.",
		func(ctx context.Context, env *Env, in publishIn) (domain.Event, error) {
			if in.Stream == "" {
				return domain.Event{}, domain.Required("stream")
			}
			st, err := env.Store.GetStream(ctx, in.Stream)
			if err != nil {
				return domain.Event{}, err
			}
			if err := publishable(env, st); err != nil {
				return domain.Event{}, err
			}
			if err := checkDMAccess(ctx, env, st.ID); err != nil {
				return domain.Event{}, err
			}
			return appendMessage(ctx, env, st.ID, in.envelope)
		}).annotated("Publish", openWorld).inCore(2)
}

// publishable refuses streams that only the system or the outside world
// writes: system streams, and streams of a kind that only receives.
func publishable(env *Env, st domain.Stream) error {
	spec, err := env.Store.Transports().Spec("stream", st.Transport.Kind)
	if err != nil {
		return err
	}
	kind, _ := domain.StreamKindOf(st.ID)
	switch {
	case st.ID == domain.StreamOrg:
		return domain.Invalid("stream", "%s is the org's audit trail; it is written by the system as the org changes", st.ID)
	case kind == domain.StreamActivations:
		return domain.Invalid("stream", "%s is an activation log; only the agent runtime writes to it", st.ID)
	case kind == domain.StreamInbox:
		return domain.Invalid("stream", "%s is an inbox; only the system writes to it (approvals, incidents)", st.ID)
	case !spec.Publish:
		return domain.Invalid("stream", "%s is a %s stream, which takes no messages from workers: %s", st.ID, spec.Kind, spec.About)
	}
	return nil
}

// maxBody is the body limit of what workers publish.
func maxBody(ctx context.Context, env *Env) int {
	return int(env.Store.IntSetting(ctx, MaxBodySetting))
}

// appendMessage stores the caller's message; the store checks it. Its
// error is not prefixed: a tool error is read as the called tool's
// (publish, dm, invite), and clients name that tool already.
func appendMessage(ctx context.Context, env *Env, stream string, e envelope) (domain.Event, error) {
	return env.Store.Append(ctx, domain.Event{StreamID: stream, Source: env.Caller, CausedBy: env.ActivationID, Message: e.message(env.Caller)},
		store.AppendOptions{MaxBody: maxBody(ctx, env)})
}
