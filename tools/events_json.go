package tools

import (
	"strconv"

	"github.com/helixml/helix-org/domain"
)

// answerEvents is the answer of the tools that return events
// (readEventsOut): the JSON answerJSON writes — keys sorted, escaped as
// domain.MarshalPlain escapes — written field by field. Reflection and sorting
// the keys after were a third of a short read_events call's CPU. A
// message with attachments or an extra, and a label, are rare, and go
// the general way; TestAnswerEventsAsAnswerJSON pins the bytes.
func answerEvents(out any) ([]byte, any, error) {
	o, ok := out.(readEventsOut)
	if !ok {
		return answerJSON(out)
	}
	b := make([]byte, 0, 64+320*len(o.Events))
	b = strconv.AppendInt(append(b, `{"cursor":`...), o.Cursor, 10)
	b = append(b, `,"events":[`...)
	for i := range o.Events {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = appendEvent(b, &o.Events[i]); err != nil {
			return nil, nil, err
		}
	}
	b = append(b, "]}"...)
	return b, Marshalled(b), nil
}

// appendEvent writes e as json.Marshal and sortKeys would: its members
// in key order, those marked omitempty left out when empty.
func appendEvent(b []byte, e *domain.Event) ([]byte, error) {
	var err error
	if e.CausedBy != "" {
		b = appendJSONString(append(b, `{"causedBy":`...), e.CausedBy)
		b = append(b, `,"createdAt":"`...)
	} else {
		b = append(b, `{"createdAt":"`...)
	}
	if b, err = e.CreatedAt.AppendText(b); err != nil { // as Time.MarshalJSON
		return nil, err
	}
	b = append(b, '"')
	if e.Depth != 0 {
		b = strconv.AppendInt(append(b, `,"depth":`...), int64(e.Depth), 10)
	}
	b = appendJSONString(append(b, `,"id":`...), e.ID)
	if !e.Label.IsZero() {
		if b, err = appendSorted(append(b, `,"label":`...), e.Label); err != nil {
			return nil, err
		}
	}
	if b, err = appendMessageJSON(append(b, `,"message":`...), &e.Message); err != nil {
		return nil, err
	}
	b = strconv.AppendInt(append(b, `,"seq":`...), e.Seq, 10)
	if e.Source != "" {
		b = appendJSONString(append(b, `,"source":`...), e.Source)
	}
	b = appendJSONString(append(b, `,"sourceKind":`...), string(e.SourceKind))
	b = appendJSONString(append(b, `,"streamId":`...), e.StreamID)
	if e.Undecodable != "" {
		b = appendJSONString(append(b, `,"undecodable":`...), e.Undecodable)
	}
	return append(b, '}'), nil
}

// appendMessageJSON writes m's members in key order; one with attachments or
// an extra goes the general way.
func appendMessageJSON(b []byte, m *domain.Message) ([]byte, error) {
	if m.Attachments != nil || m.Extra != nil {
		return appendSorted(b, m)
	}
	b = appendJSONString(append(b, `{"body":`...), m.Body)
	for _, f := range []struct{ key, v string }{
		{`,"bodyContentType":`, m.BodyContentType}, {`,"from":`, m.From}, {`,"inReplyTo":`, m.InReplyTo},
		{`,"messageId":`, m.MessageID}, {`,"subject":`, m.Subject}, {`,"threadId":`, m.ThreadID},
	} {
		if f.v != "" {
			b = appendJSONString(append(b, f.key...), f.v)
		}
	}
	if len(m.To) > 0 {
		b = append(b, `,"to":[`...)
		for i, to := range m.To {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, to)
		}
		b = append(b, ']')
	}
	return append(b, '}'), nil
}

// appendSorted writes v as outputJSON would.
func appendSorted(b []byte, v any) ([]byte, error) {
	raw, err := domain.MarshalPlain(v)
	if err != nil {
		return nil, err
	}
	if raw, err = sortKeys(raw); err != nil {
		return nil, err
	}
	return append(b, raw...), nil
}

// appendJSONString writes s quoted as outputJSON does: printable ASCII
// that domain.MarshalPlain does not escape is copied, anything else marshalled
// and passed through sortKeys' appendString.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			q, _ := domain.MarshalPlain(s)
			return appendString(b, q)
		}
	}
	return append(append(append(b, '"'), s...), '"')
}
