package webhook

import (
	"encoding/json"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/transports/delivery"
	"github.com/helixml/helix-org/transports/inbound"
	"github.com/helixml/helix-org/transports/transport"
)

// Kind is the webhook transport's kind.
const Kind domain.TransportKind = "webhook"

// Transport is the webhook transport, for cmd's list.
var Transport = transport.Descriptor{
	TransportSpec: domain.TransportSpec{
		Kind:    Kind,
		About:   "any HTTP client in (Standard Webhooks), and out to a URL",
		Config:  `{"secret":"whsec_<base64 key of 16+ bytes>","outbound_url":"https://…"}, both optional; with a secret, inbound requests must be signed`,
		Check:   func(raw json.RawMessage) error { _, err := ParseConfig(raw); return err },
		Secrets: []string{"secret"},
		Publish: true,
		Admit:   admit,
	},
	Settings: Settings,
	Endpoints: func(d transport.Deps) []inbound.Endpoint {
		return []inbound.Endpoint{Endpoint(d.Store, d.Now)}
	},
	Sender: func(d transport.Deps) delivery.Sender {
		return NewSender(d.Client, SenderOptions{UserAgent: d.UserAgent, Now: d.Now})
	},
}

// MinKeyBytes is the shortest HMAC key a secret may hold.
const MinKeyBytes = 16

// Config is a webhook stream's config. Both fields are optional.
type Config struct {
	Secret      string `json:"secret,omitempty"`
	OutboundURL string `json:"outbound_url,omitempty"`
}

// ParseConfig decodes and checks a stream's config. The receiver and the
// sender read the config through it too, so a secret it accepts is one
// they can verify and sign with.
func ParseConfig(raw json.RawMessage) (Config, error) {
	var c Config
	if err := domain.DecodeConfig(raw, &c); err != nil {
		return c, err
	}
	if c.Secret != "" {
		key, err := Key(c.Secret)
		if err != nil {
			return c, domain.Invalid(domain.ConfigField("secret"), "%v", err)
		}
		if len(key) < MinKeyBytes {
			return c, domain.Invalid(domain.ConfigField("secret"), "holds a %d-byte key; the key after \"whsec_\" must be at least %d bytes, base64-encoded", len(key), MinKeyBytes)
		}
	}
	if c.OutboundURL != "" {
		if err := domain.ValidateHTTPURL(c.OutboundURL); err != nil {
			return c, domain.Invalid(domain.ConfigField("outbound_url"), "%v", err)
		}
	}
	return c, nil
}

// realClock is the default clock of the receiver and sender.
func realClock(now func() time.Time) func() time.Time {
	if now == nil {
		return time.Now
	}
	return now
}
