package store_test

import (
	"encoding/json"

	"github.com/helixml/helix-org/domain"
)

// The store knows transports only through the specs it is opened with;
// these stand in for what transports/webhook and transports/email declare.
const (
	kindWebhook domain.TransportKind = "webhook"
	kindEmail   domain.TransportKind = "email"
)

var testTransports = domain.NewTransports(
	domain.TransportSpec{Kind: kindWebhook, Secrets: []string{"secret"}, Publish: true, Check: func(raw json.RawMessage) error {
		var c struct {
			Secret      string `json:"secret"`
			OutboundURL string `json:"outbound_url"`
		}
		return domain.DecodeConfig(raw, &c)
	}},
	domain.TransportSpec{Kind: kindEmail, Publish: true, Check: func(raw json.RawMessage) error {
		var c struct {
			Alias string `json:"alias"`
		}
		return domain.DecodeConfig(raw, &c)
	}},
)
