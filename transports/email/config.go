package email

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/transports/delivery"
)

// DefaultAPIURL is Postmark's API.
const DefaultAPIURL = "https://api.postmarkapp.com"

// DefaultMaxBody bounds an inbound webhook body. Postmark accepts messages
// up to 35 MB; base64 attachments and JSON grow that by about a third.
const DefaultMaxBody = 50 << 20

// ConfigSetting is transport.postmark, one JSON object read on every
// request and send, so changes apply without a restart.
var ConfigSetting = domain.SettingSpec{
	Key: "transport.postmark", Type: domain.SettingJSON, Default: "{}",
	Description: `Postmark: {"server_token":"…","from":"support@example.com","inbound_address":"<hash>@inbound.postmarkapp.com",` +
		`"inbound_user":"…","inbound_password":"…","api_url":"` + DefaultAPIURL + `","message_stream":"outbound"}. ` +
		`Inbound mail is refused (401) until inbound_user and inbound_password are set.`,
	SecretFields: []string{"server_token", "inbound_password"},
}

// MaxBodySetting bounds an inbound webhook body; a larger one gets 413.
var MaxBodySetting = domain.SettingSpec{
	Key: "transport.postmark.max_body_bytes", Type: domain.SettingInt, Default: strconv.Itoa(DefaultMaxBody),
	Description: "Largest Postmark inbound webhook body accepted, in bytes (attachments included, base64-encoded).",
}

// Settings lists the email transport's config keys.
var Settings = domain.Settings{ConfigSetting, MaxBodySetting, delivery.MaxAttemptsSetting(domain.TransportEmail)}

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

// settingReader is how both halves read their config.
type settingReader interface {
	SettingOr(ctx context.Context, spec domain.SettingSpec) (string, error)
}

func loadConfig(ctx context.Context, st settingReader) (Config, error) {
	raw, err := st.SettingOr(ctx, ConfigSetting)
	if err != nil {
		return Config{}, err
	}
	var c Config
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		// Never the value in the error: it holds secrets.
		return Config{}, fmt.Errorf("%s is not a valid JSON object", ConfigSetting.Key)
	}
	if c.APIURL == "" {
		c.APIURL = DefaultAPIURL
	}
	if c.MessageStream == "" {
		c.MessageStream = "outbound"
	}
	return c, nil
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
