package telegram

import (
	"encoding/json"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/transports/delivery"
	"github.com/helixml/helix-org/transports/inbound"
	"github.com/helixml/helix-org/transports/transport"
)

// Kind is the Telegram transport's kind.
const Kind domain.TransportKind = "telegram"

// DefaultAPIURL is Telegram's Bot API.
const DefaultAPIURL = "https://api.telegram.org"

// Transport is the Telegram transport, for cmd's list.
var Transport = transport.Descriptor{
	TransportSpec: domain.TransportSpec{
		Kind:    Kind,
		About:   "a Telegram chat through the bot: its messages in (webhook), replies out (sendMessage)",
		Config:  `{"chat_id":"-1001234567890","message_thread_id":7}; message_thread_id is optional and narrows the stream to one forum topic`,
		Check:   func(raw json.RawMessage) error { _, err := ParseStreamConfig(raw); return err },
		Publish: true,
		Contact: &domain.ContactSpec{Address: "the chat_id of the human's chat with the bot", Stream: contactStream},
	},
	Settings:  Settings,
	Endpoints: func(d transport.Deps) []inbound.Endpoint { return []inbound.Endpoint{Endpoint(d.Store)} },
	Sender:    func(d transport.Deps) delivery.Sender { return NewSender(d.Store, d.Client) },
}

// setting is transport.telegram, read on every request and send.
var setting = transport.NewSetting("telegram",
	`Telegram bot: {"bot_token":"123456:ABC…","secret_token":"…","api_url":"`+DefaultAPIURL+`"}. `+
		`secret_token is the one given to setWebhook (1-256 of A-Z a-z 0-9 _ -); updates are refused (401) until it is set.`,
	[]string{"bot_token", "secret_token"}, parseSettings)

// ConfigSetting is transport.telegram's spec.
var ConfigSetting = setting.SettingSpec

// MaxBodySetting bounds an update's body; a larger one gets 413.
var MaxBodySetting = inbound.MaxBodySetting(ConfigSetting.Key, 1<<20,
	"Largest Telegram update accepted, in bytes.")

// Settings lists the Telegram transport's config keys.
var Settings = domain.Settings{ConfigSetting, MaxBodySetting, delivery.MaxAttemptsSetting(Kind)}

// Config is the decoded transport.telegram setting.
type Config struct {
	BotToken    string `json:"bot_token"`
	SecretToken string `json:"secret_token"`
	APIURL      string `json:"api_url"`
}

var (
	// secretToken is Telegram's own rule for setWebhook's secret_token.
	// Compiled when first used: a counted repeat such as {1,256} is
	// that many copies in the program, a millisecond of every start.
	secretToken = domain.LazyRegexp(`^[A-Za-z0-9_-]{1,256}$`)
	botTokenRe  = domain.LazyRegexp(`^[0-9]{1,20}:[A-Za-z0-9_-]{20,}$`)
	chatID      = domain.LazyRegexp(`^-?[0-9]{1,20}$`)
)

// parseSettings decodes and checks transport.telegram; the receiver and
// the sender read it through here too. Errors never quote a value.
func parseSettings(raw string) (Config, error) {
	var c Config
	if err := transport.DecodeSettings("transport.telegram", raw, &c); err != nil {
		return c, err
	}
	switch {
	case c.SecretToken != "" && !secretToken().MatchString(c.SecretToken):
		return c, domain.Invalid("secret_token", "must be 1 to 256 of A-Z, a-z, 0-9, '_' and '-', as setWebhook takes it")
	case c.BotToken != "" && !botTokenRe().MatchString(c.BotToken):
		return c, domain.Invalid("bot_token", `must be a token as @BotFather gives it: digits, ":", then letters, digits, '_' and '-'`)
	}
	return c, transport.URL("api_url", &c.APIURL, DefaultAPIURL)
}

// Sendable is nil once the bot token a message needs is set.
func (c Config) Sendable() error { return delivery.Need(ConfigSetting.Key, "bot_token", c.BotToken) }

// StreamConfig is a telegram stream's config.
type StreamConfig struct {
	ChatID string `json:"chat_id"`
	// MessageThreadID, when set, narrows the stream to one forum topic.
	MessageThreadID int64 `json:"message_thread_id,omitempty"`
}

// ParseStreamConfig decodes and checks a telegram stream's config.
func ParseStreamConfig(raw json.RawMessage) (StreamConfig, error) {
	var c StreamConfig
	if err := domain.DecodeConfig(raw, &c); err != nil {
		return c, err
	}
	if c.ChatID == "" {
		return c, domain.Required(domain.ConfigField("chat_id"))
	}
	if !chatID().MatchString(c.ChatID) {
		return c, domain.Invalid(domain.ConfigField("chat_id"), "%q must be the chat's numeric id, such as \"-1001234567890\"", c.ChatID)
	}
	if c.MessageThreadID < 0 {
		return c, domain.Invalid(domain.ConfigField("message_thread_id"), "must be a topic's positive id")
	}
	return c, nil
}

// contactStream is the stream of a human reached in the chat address.
func contactStream(_, address string) (json.RawMessage, error) {
	if !chatID().MatchString(address) {
		return nil, domain.Invalid("address", "%q must be the chat_id of the human's chat with the bot, such as \"90017\"", address)
	}
	return json.Marshal(StreamConfig{ChatID: address})
}
