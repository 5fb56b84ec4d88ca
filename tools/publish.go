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
	Body            string              `json:"body"`
	Subject         string              `json:"subject,omitempty"`
	To              []string            `json:"to,omitempty"`
	ThreadID        string              `json:"threadId,omitempty"`
	InReplyTo       string              `json:"inReplyTo,omitempty"`
	MessageID       string              `json:"messageId,omitempty"`
	BodyContentType string              `json:"bodyContentType,omitempty"`
	Attachments     []domain.Attachment `json:"attachments,omitempty"`
	Extra           json.RawMessage     `json:"extra,omitempty"`
}

func (e envelope) message(from string) domain.Message {
	return domain.Message{From: from, To: e.To, Subject: e.Subject, Body: e.Body, ThreadID: e.ThreadID,
		InReplyTo: e.InReplyTo, MessageID: e.MessageID, BodyContentType: e.BodyContentType,
		Attachments: e.Attachments, Extra: e.Extra}
}

type publishIn struct {
	Stream string `json:"stream"`
	envelope
}

func publish() Tool {
	return define("publish", "Publish on a Stream; wakes its AI subscribers.",
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
		}).annotated("Publish", openWorld)
}

// publishable refuses streams that only the system or the outside world
// writes: system streams, and streams of a kind that only receives.
func publishable(env *Env, st domain.Stream) error {
	spec, err := env.Store.Transports().Spec("stream", st.Transport.Kind)
	if err != nil {
		return err
	}
	switch {
	case st.ID == domain.StreamOrg:
		return domain.Invalid("stream", "%s is the org's audit trail; it is written by the system as the org changes", st.ID)
	case strings.HasPrefix(st.ID, domain.ActivationStreamPrefix):
		return domain.Invalid("stream", "%s is an activation log; only the agent runtime writes to it", st.ID)
	case strings.HasPrefix(st.ID, domain.InboxStreamPrefix):
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

// appendMessage stores the caller's message; the store checks it.
func appendMessage(ctx context.Context, env *Env, stream string, e envelope) (domain.Event, error) {
	ev, err := env.Store.Append(ctx, domain.Event{StreamID: stream, Source: env.Caller, CausedBy: env.ActivationID, Message: e.message(env.Caller)},
		store.AppendOptions{MaxBody: maxBody(ctx, env)})
	if err != nil {
		return domain.Event{}, fmt.Errorf("publish: %w", err)
	}
	return ev, nil
}
