package webhook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/transports/inbound"
)

// ErrUnsupportedBody is wrapped when a body is not text (answered 415).
var ErrUnsupportedBody = inbound.ErrUnsupported

// Parse turns an inbound request body into a message. The body is kept as
// text with its content type. A JSON body (application/json, */*+json) is
// also parsed into Extra and must be valid — malformed JSON is an error
// (400), not stored as text, since the sender said it was JSON. A form body
// (application/x-www-form-urlencoded) is parsed into Extra as an object of
// its fields. Bodies that are not UTF-8 are refused, and so are bodies
// that carry nothing: blank text, an empty JSON value ({}, [], null, "")
// or a form without fields.
func Parse(contentType string, body []byte) (domain.Message, error) {
	msg := domain.Message{Body: string(body), BodyContentType: contentType}
	if len(bytes.TrimSpace(body)) == 0 {
		return msg, domain.Required("body")
	}
	if !utf8.Valid(body) {
		return msg, fmt.Errorf("%w: the body is not UTF-8 text; send binary data base64-encoded", ErrUnsupportedBody)
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return msg, nil // an unreadable Content-Type is kept as given; the body is text
	}
	switch {
	case mt == "application/json" || strings.HasSuffix(mt, "+json"):
		var buf bytes.Buffer
		if err := json.Compact(&buf, body); err != nil {
			return msg, domain.Invalid("body", "Content-Type is %s but the body is not valid JSON: %v", mt, err)
		}
		switch {
		case slices.Contains([]string{"{}", "[]", "null", `""`}, buf.String()):
			return msg, domain.Invalid("body", "is an empty JSON value (%s); there is nothing to store", buf.String())
		case buf.Len() > domain.MaxExtra:
			return msg, domain.Invalid("body", "is %d bytes of JSON; JSON is kept parsed in extra, whose limit is %d bytes: send less, or send it as text/plain", buf.Len(), domain.MaxExtra)
		}
		msg.Extra = buf.Bytes()
	case mt == "application/x-www-form-urlencoded":
		fields, err := url.ParseQuery(string(body))
		if err != nil {
			return msg, domain.Invalid("body", "Content-Type is %s but the body is not a valid form: %v", mt, err)
		}
		if len(fields) == 0 {
			return msg, domain.Invalid("body", "is a form without fields; there is nothing to store")
		}
		msg.Extra, err = formJSON(fields)
		if err != nil {
			return msg, err
		}
	}
	return msg, nil
}

// formJSON renders form fields as a JSON object: one value as a string,
// repeated values as a list.
func formJSON(fields url.Values) (json.RawMessage, error) {
	m := make(map[string]any, len(fields))
	for k, vs := range fields {
		if len(vs) == 1 {
			m[k] = vs[0]
		} else {
			m[k] = vs
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encode form fields: %w", err)
	}
	return b, nil
}
