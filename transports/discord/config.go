package discord

import (
	"context"
	"encoding/json"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/transports/delivery"
	"github.com/helixml/helix-org/transports/inbound"
	"github.com/helixml/helix-org/transports/transport"
)

// Kind is the Discord transport's kind.
const Kind domain.TransportKind = "discord"

// DefaultAPIURL is Discord's REST API, version 10.
const DefaultAPIURL = "https://discord.com/api/v10"

// Transport is the Discord transport, for cmd's list.
var Transport = transport.Descriptor{
	TransportSpec: domain.TransportSpec{
		Kind:  Kind,
		About: "a Discord channel or a person's DMs with the bot: messages in (Gateway), replies out in their thread",
		Config: `{"channel":"<channel id>"} for a guild channel and its threads, or {"user":"<user id>"} for that person's DMs with the bot; ` +
			`ids are Discord's snowflakes`,
		Check:   func(raw json.RawMessage) error { _, err := ParseStreamConfig(raw); return err },
		Publish: true,
		Contact: &domain.ContactSpec{Address: "the person's Discord user id (a snowflake such as \"80351110224678912\"); they are reached in their DMs with the bot", Stream: contactStream},
	},
	Settings: Settings,
	Sender:   func(d transport.Deps) delivery.Sender { return NewSender(d.Store, d.Client) },
	Run: func(ctx context.Context, d transport.Deps) error {
		return (&Gateway{Store: d.Store, Client: d.Client, Logger: d.Logger}).Run(ctx)
	},
}

// setting is transport.discord, read at each connection and send.
var setting = transport.NewSetting("discord",
	`Discord bot: {"bot_token":"…","api_url":"`+DefaultAPIURL+`"}. The server connects to the Gateway once bot_token is set `+
		`(the bot needs the Message Content intent enabled in the developer portal).`,
	[]string{"bot_token"}, parseSettings)

// ConfigSetting is transport.discord's spec.
var ConfigSetting = setting.SettingSpec

// MaxBodySetting bounds one Gateway payload; a larger one ends the
// connection (and it is resumed).
var MaxBodySetting = inbound.MaxBodySetting(ConfigSetting.Key, 4<<20,
	"Largest Discord Gateway payload accepted, in bytes; the message stored is bounded by it too.")

// Settings lists the Discord transport's config keys.
var Settings = domain.Settings{ConfigSetting, MaxBodySetting, delivery.MaxAttemptsSetting(Kind)}

// Config is the decoded transport.discord setting.
type Config struct {
	BotToken string `json:"bot_token"`
	APIURL   string `json:"api_url"`
}

var (
	// botToken is a bot token as the developer portal shows it: three
	// base64url parts joined by dots.
	botToken  = domain.LazyRegexp(`^[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{20,}$`)
	snowflake = domain.LazyRegexp(`^[1-9][0-9]{15,19}$`)
)

// parseSettings decodes and checks transport.discord; the loop and the
// sender read it through here. Errors never quote the token.
func parseSettings(raw string) (Config, error) {
	var c Config
	if err := transport.DecodeSettings("transport.discord", raw, &c); err != nil {
		return c, err
	}
	if c.BotToken != "" && !botToken().MatchString(c.BotToken) {
		return c, domain.Invalid("bot_token", "must be the bot's token as the developer portal shows it: three parts of A-Z a-z 0-9 _ - joined by dots, without \"Bot \"")
	}
	return c, transport.URL("api_url", &c.APIURL, DefaultAPIURL)
}

// Sendable is nil once the bot token a message needs is set.
func (c Config) Sendable() error { return delivery.Need(ConfigSetting.Key, "bot_token", c.BotToken) }

// StreamConfig is a discord stream's config: one of its fields.
type StreamConfig struct {
	// Channel is a guild channel; its threads come with it.
	Channel string `json:"channel,omitempty"`
	// User is a person whose DMs with the bot the stream takes.
	User string `json:"user,omitempty"`
}

// ParseStreamConfig decodes and checks a discord stream's config.
func ParseStreamConfig(raw json.RawMessage) (StreamConfig, error) {
	var c StreamConfig
	if err := domain.DecodeConfig(raw, &c); err != nil {
		return c, err
	}
	switch {
	case c.Channel == "" && c.User == "":
		return c, domain.Invalid(domain.ConfigField("channel"), `is required: {"channel":"<channel id>"}, or {"user":"<user id>"} for a person's DMs`)
	case c.Channel != "" && c.User != "":
		return c, domain.Invalid(domain.ConfigField("user"), "goes without channel: a stream follows a channel or a person's DMs")
	case c.Channel != "" && !snowflake().MatchString(c.Channel):
		return c, domain.Invalid(domain.ConfigField("channel"), "%q must be a channel id, such as \"1064211298675183666\" (Developer Mode: Copy Channel ID), not a #name", c.Channel)
	case c.User != "" && !snowflake().MatchString(c.User):
		return c, domain.Invalid(domain.ConfigField("user"), "%q must be a user id, such as \"80351110224678912\" (Developer Mode: Copy User ID), not a name", c.User)
	}
	return c, nil
}

// contactStream is the stream of a human reached in their DMs.
func contactStream(_, address string) (json.RawMessage, error) {
	if !snowflake().MatchString(address) {
		return nil, domain.Invalid("address", "%q must be the person's Discord user id, such as \"80351110224678912\" (Developer Mode: Copy User ID)", address)
	}
	return json.Marshal(StreamConfig{User: address})
}
