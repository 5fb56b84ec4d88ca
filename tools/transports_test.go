package tools

import (
	"encoding/json"

	"github.com/helixml/helix-org/domain"
)

// testTransports stand in for the binary's transport packages, which tools
// never import: the tools know a kind only by its spec. Each kind's own
// config rules are tested in its package.
var testTransports = domain.NewTransports(
	domain.TransportSpec{Kind: "webhook", About: "HTTP in and out", Config: `{"secret":"whsec_…","outbound_url":"https://…"}`,
		Secrets: []string{"secret"}, Publish: true, Check: strictConfig[struct {
			Secret      string `json:"secret"`
			OutboundURL string `json:"outbound_url"`
		}]},
	domain.TransportSpec{Kind: "email", About: "email in and out", Config: `{"alias":"sam"}`, Publish: true, Check: func(raw json.RawMessage) error {
		var c struct {
			Alias string `json:"alias"`
		}
		if err := domain.DecodeConfig(raw, &c); err != nil {
			return err
		}
		if c.Alias == "" {
			return domain.Required(domain.ConfigField("alias"))
		}
		return nil
	}},
	domain.TransportSpec{Kind: "github", About: "GitHub webhooks in; nothing goes out", Config: `{"repo":"owner/name","events":["issues"]}`,
		Check: strictConfig[struct {
			Repo   string   `json:"repo"`
			Events []string `json:"events"`
		}]},
)

func strictConfig[T any](raw json.RawMessage) error {
	var c T
	return domain.DecodeConfig(raw, &c)
}
