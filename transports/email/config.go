package email

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/transports/delivery"
	"github.com/helixml/helix-org/transports/inbound"
	"github.com/helixml/helix-org/transports/transport"
)

// Kind is the email transport's kind.
const Kind domain.TransportKind = "email"

// Transport is the email transport (Postmark), for cmd's list.
var Transport = transport.Descriptor{
	TransportSpec: domain.TransportSpec{
		Kind:    Kind,
		About:   "email in and out through Postmark",
		Config:  `{"alias":"sam"}: mail to <hash>+sam@<inbound domain> lands here; replies go out from transport.postmark's "from" with Reply-To the alias`,
		Check:   func(raw json.RawMessage) error { _, err := ParseStreamConfig(raw); return err },
		Publish: true,
		Contact: &domain.ContactSpec{Address: "an email address such as lee@example.com", Stream: contactStream, Mail: true, Ready: ready},
	},
	Settings:  Settings,
	Endpoints: func(d transport.Deps) []inbound.Endpoint { return []inbound.Endpoint{Endpoint(d.Store)} },
	Sender:    func(d transport.Deps) delivery.Sender { return NewSender(d.Store, d.Client, d.Logger) },
}

// StreamConfig routes inbound mail for <hash>+<alias>@… to a stream.
type StreamConfig struct {
	Alias string `json:"alias"`
}

// ParseStreamConfig decodes and checks an email stream's config.
func ParseStreamConfig(raw json.RawMessage) (StreamConfig, error) {
	var c StreamConfig
	if err := domain.DecodeConfig(raw, &c); err != nil {
		return c, err
	}
	field := domain.ConfigField("alias")
	if c.Alias == "" {
		return c, domain.Required(field)
	}
	for _, r := range c.Alias {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return c, domain.Invalid(field, "%q may contain only lowercase letters, digits, '-' and '_'", c.Alias)
		}
	}
	if len(c.Alias) > 64 {
		return c, domain.Invalid(field, "is longer than 64 characters")
	}
	return c, nil
}

var emailAddress = domain.LazyRegexp(`^[^@\s<>,;"]+@[^@\s<>,;"]+\.[^@\s<>,;"]+$`)

// contactStream is the stream a human reached at address runs on: its
// alias is the worker's id, so the replies it mails come back there.
func contactStream(worker, address string) (json.RawMessage, error) {
	if len(address) > domain.MaxAddress || !emailAddress().MatchString(address) {
		return nil, domain.Invalid("address", "%q is not an email address such as lee@example.com", address)
	}
	return json.Marshal(StreamConfig{Alias: worker})
}

// DefaultAPIURL is Postmark's API.
const DefaultAPIURL = "https://api.postmarkapp.com"

// DefaultMaxBody bounds an inbound webhook body. Postmark accepts messages
// up to 35 MB; base64 attachments and JSON grow that by about a third.
const DefaultMaxBody = 50 << 20

// setting is transport.postmark, one JSON object read on every
// request and send, so changes apply without a restart.
var setting = transport.NewSetting("postmark",
	`Postmark: {"server_token":"…","from":"support@example.com","inbound_address":"<hash>@inbound.postmarkapp.com",`+
		`"inbound_user":"…","inbound_password":"…","api_url":"`+DefaultAPIURL+`","message_stream":"outbound"}. `+
		`Inbound mail is refused (401) until inbound_user and inbound_password are set.`,
	[]string{"server_token", "inbound_password"}, parseSettings)

// ConfigSetting is transport.postmark's spec.
var ConfigSetting = setting.SettingSpec

// MaxBodySetting bounds an inbound webhook body; a larger one gets 413.
var MaxBodySetting = inbound.MaxBodySetting(ConfigSetting.Key, DefaultMaxBody,
	"Largest Postmark inbound webhook body accepted, in bytes (attachments included, base64-encoded).")

// Settings lists the email transport's config keys.
var Settings = domain.Settings{ConfigSetting, MaxBodySetting, delivery.MaxAttemptsSetting(Kind)}

// Config is the decoded transport.postmark setting.
type Config struct {
	ServerToken     string `json:"server_token"`
	From            string `json:"from"`
	InboundAddress  string `json:"inbound_address"`
	InboundUser     string `json:"inbound_user"`
	InboundPassword string `json:"inbound_password"`
	APIURL          string `json:"api_url"`
	MessageStream   string `json:"message_stream"`
}

// parseSettings decodes transport.postmark; a value that is not an
// object is refused without quoting it (it holds secrets), and so is what
// could be stored but never verified: an inbound_user with a colon, where
// basic auth splits user from password (RFC 7617), so Postmark's every
// POST would get 401.
func parseSettings(raw string) (Config, error) {
	var c Config
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		return c, domain.Invalid("transport.postmark", "is not a valid JSON object")
	}
	if strings.Contains(c.InboundUser, ":") {
		return c, domain.Invalid("inbound_user", "cannot contain ':': basic auth splits the user from the password there")
	}
	c.APIURL = cmp.Or(c.APIURL, DefaultAPIURL)
	c.MessageStream = cmp.Or(c.MessageStream, "outbound")
	return c, nil
}

// Sendable is nil once the server token and the from address mail needs
// are set.
func (c Config) Sendable() error {
	return cmp.Or(delivery.Need(ConfigSetting.Key, "server_token", c.ServerToken), delivery.Need(ConfigSetting.Key, "from", c.From))
}

// ready says whether mail can go out now: transport.postmark holds the
// server token and the from address.
func ready(setting func(domain.SettingSpec) string) error {
	c, err := parseSettings(setting(ConfigSetting))
	if err != nil {
		return err
	}
	for _, f := range [...]struct{ name, value string }{{"server_token", c.ServerToken}, {"from", c.From}} {
		if f.value == "" {
			return fmt.Errorf("%s has no %s", ConfigSetting.Key, f.name)
		}
	}
	return nil
}

// AliasAddress is where mail for alias arrives:
// <hash>+<alias>@inbound.postmarkapp.com for inbound address
// <hash>@inbound.postmarkapp.com.
func (c Config) AliasAddress(alias string) (string, error) {
	local, domainPart, ok := strings.Cut(c.InboundAddress, "@")
	local, _, _ = strings.Cut(local, "+")
	if !ok || local == "" || domainPart == "" {
		return "", fmt.Errorf("%s.inbound_address %q is not an address like <hash>@inbound.postmarkapp.com", ConfigSetting.Key, c.InboundAddress)
	}
	return local + "+" + alias + "@" + domainPart, nil
}
