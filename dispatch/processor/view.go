package processor

import (
	"encoding/json"

	"github.com/helixml/helix-org/domain"
)

// The event as expressions and templates see it, and nothing else: its
// message, where it came from, and its label. Field names are the
// envelope's JSON names, so what a worker reads in an event is what it
// writes in an expression.
type (
	// Message is `message` in an expression.
	Message struct {
		From            string         `cel:"from"`
		To              []string       `cel:"to"`
		Subject         string         `cel:"subject"`
		Body            string         `cel:"body"`
		ThreadID        string         `cel:"threadId"`
		InReplyTo       string         `cel:"inReplyTo"`
		MessageID       string         `cel:"messageId"`
		BodyContentType string         `cel:"bodyContentType"`
		Extra           map[string]any `cel:"extra"`
	}
	// Source is `source`: the input stream's transport kind and id, and
	// who appended the event (a worker id, empty for the outside world
	// and the system) and of what kind (human, ai, system).
	Source struct {
		Kind   string `cel:"kind"`
		Stream string `cel:"stream"`
		Worker string `cel:"worker"`
		Type   string `cel:"type"`
	}
	// Label is `label`: whether the event is untrusted and why, and who
	// may read it (empty: the org).
	Label struct {
		Untrusted bool     `cel:"untrusted"`
		Origin    string   `cel:"origin"`
		Readers   []string `cel:"readers"`
	}
)

// view is one event in the forms its processor reads it.
type view struct {
	ev      domain.Event
	message *Message
	source  *Source
	label   *Label
}

func newView(in Input) (view, error) {
	m := in.Event.Message
	extra := map[string]any{}
	if len(m.Extra) > 0 {
		// An extra that is not an object (an array, a string) has no
		// fields to name; it reads as empty.
		var v any
		if err := json.Unmarshal(m.Extra, &v); err == nil {
			if obj, ok := v.(map[string]any); ok {
				extra = obj
			}
		}
	}
	to := m.To
	if to == nil {
		to = []string{}
	}
	readers := in.Event.Label.Readers
	if readers == nil {
		readers = []string{}
	}
	return view{ev: in.Event,
		message: &Message{From: m.From, To: to, Subject: m.Subject, Body: m.Body, ThreadID: m.ThreadID, InReplyTo: m.InReplyTo,
			MessageID: m.MessageID, BodyContentType: m.BodyContentType, Extra: extra},
		source: &Source{Kind: string(in.StreamKind), Stream: in.Event.StreamID, Worker: in.Event.Source, Type: string(in.Event.SourceKind)},
		label:  &Label{Untrusted: in.Event.Label.Untrusted, Origin: in.Event.Label.Origin, Readers: readers},
	}, nil
}

// activation is the view as CEL variables.
func (v view) activation() map[string]any {
	return map[string]any{"message": v.message, "source": v.source, "label": v.label}
}

// data is the view as a template's data: {{.message.subject}},
// {{.message.extra.action}}, {{.source.kind}}, {{.label.untrusted}}.
func (v view) data() map[string]any {
	m := v.message
	return map[string]any{
		"message": map[string]any{"from": m.From, "to": m.To, "subject": m.Subject, "body": m.Body, "threadId": m.ThreadID,
			"inReplyTo": m.InReplyTo, "messageId": m.MessageID, "bodyContentType": m.BodyContentType, "extra": m.Extra},
		"source": map[string]any{"kind": v.source.Kind, "stream": v.source.Stream, "worker": v.source.Worker, "type": v.source.Type},
		"label":  map[string]any{"untrusted": v.label.Untrusted, "origin": v.label.Origin, "readers": v.label.Readers},
	}
}
