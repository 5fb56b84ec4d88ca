package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// envelope is the part of the Message a caller may set. Everything but the
// body is optional.
type envelope struct {
	Body            string              `json:"body" jsonschema:"the message text"`
	Subject         string              `json:"subject,omitempty"`
	To              []string            `json:"to,omitempty" jsonschema:"recipients, e.g. worker ids or email addresses"`
	ThreadID        string              `json:"threadId,omitempty" jsonschema:"groups messages into a conversation"`
	InReplyTo       string              `json:"inReplyTo,omitempty" jsonschema:"messageId this replies to"`
	MessageID       string              `json:"messageId,omitempty"`
	BodyContentType string              `json:"bodyContentType,omitempty" jsonschema:"e.g. text/plain or text/markdown"`
	Attachments     []domain.Attachment `json:"attachments,omitempty"`
	Extra           json.RawMessage     `json:"extra,omitempty" jsonschema:"any additional JSON"`
}

func (e envelope) message(from string) domain.Message {
	return domain.Message{From: from, To: e.To, Subject: e.Subject, Body: e.Body, ThreadID: e.ThreadID,
		InReplyTo: e.InReplyTo, MessageID: e.MessageID, BodyContentType: e.BodyContentType,
		Attachments: e.Attachments, Extra: e.Extra}
}

type publishIn struct {
	Stream string `json:"stream" jsonschema:"the stream to publish on"`
	envelope
}

func publish() Tool {
	return define("publish", "Publish a message on a Stream. Every subscribed AI worker but you is woken by it.",
		func(ctx context.Context, env *Env, in publishIn) (domain.Event, error) {
			if in.Stream == "" {
				return domain.Event{}, domain.Required("stream")
			}
			st, err := env.Store.GetStream(ctx, in.Stream)
			if err != nil {
				return domain.Event{}, err
			}
			if err := publishable(st); err != nil {
				return domain.Event{}, err
			}
			if err := checkDMAccess(ctx, env, st.ID); err != nil {
				return domain.Event{}, err
			}
			return appendMessage(ctx, env, st.ID, in.envelope)
		})
}

// publishable refuses streams that only the system or the outside world writes.
func publishable(st domain.Stream) error {
	switch {
	case st.ID == domain.StreamOrg:
		return domain.Invalid("stream", "%s is the org's audit trail; it is written by the system as the org changes", st.ID)
	case strings.HasPrefix(st.ID, domain.ActivationStreamPrefix):
		return domain.Invalid("stream", "%s is an activation log; only the agent runtime writes to it", st.ID)
	case st.Transport.Kind == domain.TransportGitHub:
		return domain.Invalid("stream", "%s is a github stream: it carries GitHub's webhooks in; act on GitHub through your own GitHub tools instead", st.ID)
	}
	return nil
}

// checkMessage builds the caller's message and validates it against the
// configured body limit, before anything is written.
func checkMessage(ctx context.Context, env *Env, e envelope) (domain.Message, error) {
	msg := e.message(env.Caller)
	return msg, msg.Validate(int(env.Store.IntSetting(ctx, MaxBodySetting)))
}

func appendMessage(ctx context.Context, env *Env, stream string, e envelope) (domain.Event, error) {
	msg, err := checkMessage(ctx, env, e)
	if err != nil {
		return domain.Event{}, err
	}
	ev, _, err := env.Store.Append(ctx, domain.Event{StreamID: stream, Source: env.Caller, CausedBy: env.ActivationID, Message: msg}, store.AppendOptions{})
	if err != nil {
		return domain.Event{}, fmt.Errorf("publish: %w", err)
	}
	return ev, nil
}
