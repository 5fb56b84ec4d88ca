package email

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/transports/inbound"
	"github.com/helixml/helix-org/transports/transport"
)

// InboundPattern is the route Postmark's inbound webhook is pointed at.
const InboundPattern = "POST /email/postmark"

// challenge asks a caller without credentials for basic auth.
const challenge = `Basic realm="helix-org postmark inbound"`

// Endpoint receives Postmark's inbound webhook: 401 without the
// configured basic auth (before the body is read), 400 for JSON that is
// not Postmark's or a message with nothing in it, 403 when no email
// stream has the alias (Postmark stops retrying on 403), 200 once the
// message is committed (or was already), and 500 when it could not be
// (Postmark retries).
func Endpoint(st transport.Store) inbound.Endpoint {
	return inbound.Endpoint{Pattern: InboundPattern, Kind: Kind, MaxBody: MaxBodySetting,
		Check: func(r *http.Request) (inbound.Request, error) {
			cfg, err := setting.Load(r.Context(), st)
			if err != nil {
				return inbound.Request{}, err
			}
			if err := authorize(cfg, r); err != nil {
				return inbound.Request{}, err
			}
			return inbound.Request{Parse: func(body []byte) (inbound.Batch, error) { return parse(r.Context(), st, body) }}, nil
		}}
}

func parse(ctx context.Context, st transport.Store, body []byte) (inbound.Batch, error) {
	m, err := ParseInbound(body)
	if err != nil {
		return inbound.Batch{}, inbound.Malformed(err)
	}
	s, err := streamFor(ctx, st, m.Alias)
	if err != nil {
		return inbound.Batch{}, err
	}
	return inbound.Batch{Messages: []domain.Inbound{{StreamID: s.ID, Message: m.Message, Key: m.DedupKey, Contents: m.Contents, Sender: m.Sender}}}, nil
}

// authorize checks basic auth against inbound_user / inbound_password in
// constant time; with either unset, every request is refused.
func authorize(cfg Config, r *http.Request) error {
	if cfg.InboundUser == "" || cfg.InboundPassword == "" {
		return inbound.Unauthorized(challenge, "transport.postmark has no inbound_user and inbound_password: inbound mail is refused until they are set")
	}
	user, pass, ok := r.BasicAuth()
	if !ok {
		return inbound.Unauthorized(challenge, "basic auth required")
	}
	// Hashing first makes the comparison independent of the lengths.
	u1, u2 := sha256.Sum256([]byte(user)), sha256.Sum256([]byte(cfg.InboundUser))
	p1, p2 := sha256.Sum256([]byte(pass)), sha256.Sum256([]byte(cfg.InboundPassword))
	if subtle.ConstantTimeCompare(u1[:], u2[:])&subtle.ConstantTimeCompare(p1[:], p2[:]) != 1 {
		return inbound.Unauthorized(challenge, "wrong basic auth credentials")
	}
	return nil
}

// errUnknownAlias is a refusal (403) so Postmark stops retrying a message
// no stream will ever take.
var errUnknownAlias = domain.Forbidden("unknown alias")

// streamFor finds the email stream with the alias.
func streamFor(ctx context.Context, st transport.Store, alias string) (domain.Stream, error) {
	if alias == "" {
		return domain.Stream{}, fmt.Errorf("%w: the message was not sent to <hash>+<alias>@…", errUnknownAlias)
	}
	streams, err := st.ListStreams(ctx, Kind)
	if err != nil {
		return domain.Stream{}, err
	}
	for _, s := range streams {
		var c StreamConfig
		if json.Unmarshal(s.Transport.Config, &c) == nil && c.Alias == alias {
			return s, nil
		}
	}
	return domain.Stream{}, fmt.Errorf("%w: no email stream has alias %q", errUnknownAlias, alias)
}
