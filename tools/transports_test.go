package tools

import (
	"encoding/json"
	"strings"

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
	}, Contact: &domain.ContactSpec{Address: "an email address", Mail: true, Stream: func(worker, address string) (json.RawMessage, error) {
		if !strings.Contains(address, "@") {
			return nil, domain.Invalid("address", "%q is not an email address", address)
		}
		return json.Marshal(map[string]string{"alias": worker})
	}}},
	domain.TransportSpec{Kind: "github", About: "GitHub webhooks in; nothing goes out", Config: `{"repo":"owner/name","events":["issues"]}`,
		Check: strictConfig[struct {
			Repo   string   `json:"repo"`
			Events []string `json:"events"`
		}]},
	domain.TransportSpec{Kind: "chat", About: "a chat with a bot", Config: `{"chat":"42"}`, Publish: true, Check: strictConfig[struct {
		Chat string `json:"chat"`
	}], Contact: &domain.ContactSpec{Address: "a chat id", Stream: func(_, address string) (json.RawMessage, error) {
		return json.Marshal(map[string]string{"chat": address})
	}}},
)

func strictConfig[T any](raw json.RawMessage) error {
	var c T
	return domain.DecodeConfig(raw, &c)
}
