package webhook

import (
	"fmt"
	"net/http"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/transports/inbound"
	"github.com/helixml/helix-org/transports/transport"
)

// Pattern is the inbound route.
const Pattern = "POST /webhooks/{streamId}"

// MaxIDLength bounds webhook-id, which becomes a stored dedup key.
const MaxIDLength = 256

// Endpoint turns POST /webhooks/{streamId} into an event on the stream,
// verified with its secret when it has one and stored once per
// webhook-id. now is the clock of the timestamp check (nil: time.Now).
func Endpoint(st transport.Store, now func() time.Time) inbound.Endpoint {
	now = realClock(now)
	return inbound.Endpoint{Pattern: Pattern, Kind: Kind, MaxBody: MaxBodySetting,
		Check: func(r *http.Request) (inbound.Request, error) { return check(st, now, r) }}
}

// check refuses on the headers alone — an unknown, non-webhook or
// archived stream (410 Gone, so the sender stops), an overlong id,
// missing or stale signature headers — before any of the body is read.
func check(st transport.Store, now func() time.Time, r *http.Request) (inbound.Request, error) {
	s, err := st.StreamWithSecrets(r.Context(), r.PathValue("streamId"))
	if err != nil {
		return inbound.Request{}, err
	}
	if s.Transport.Kind != Kind {
		return inbound.Request{}, domain.Conflict("stream %s is a %s stream, not a webhook stream", s.ID, s.Transport.Kind)
	}
	if s.ArchivedAt != nil {
		return inbound.Request{}, domain.StreamArchived("stream", s.ID)
	}
	id := r.Header.Get(HeaderID)
	if len(id) > MaxIDLength {
		return inbound.Request{}, domain.Invalid(HeaderID, "is longer than %d characters", MaxIDLength)
	}
	cfg, err := ParseConfig(s.Transport.Config)
	if err != nil {
		// Stored before this version checked it: ours to fix, not the sender's.
		return inbound.Request{}, fmt.Errorf("stream %s has a config this version cannot use: %s", s.ID, err)
	}
	contentType := r.Header.Get("Content-Type")
	req := inbound.Request{Parse: func(body []byte) (inbound.Batch, error) {
		msg, err := Parse(contentType, body)
		if err != nil {
			return inbound.Batch{}, err
		}
		msg.MessageID = id
		return inbound.Batch{Messages: []domain.Inbound{{StreamID: s.ID, Message: msg, Key: id}}}, nil
	}}
	if cfg.Secret == "" {
		return req, nil // a stream without a secret takes unsigned requests
	}
	key, err := Key(cfg.Secret)
	if err != nil {
		return inbound.Request{}, fmt.Errorf("stream %s: %s", s.ID, err)
	}
	v, err := Check(key, r.Header, now())
	if err != nil {
		return inbound.Request{}, err
	}
	req.Sum, req.Verify = v, v.Verify
	return req, nil
}
