package slack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/transports/delivery"
	"github.com/helixml/helix-org/transports/inbound"
	"github.com/helixml/helix-org/transports/transport"
)

// Kind is the Slack transport's kind.
const Kind domain.TransportKind = "slack"

// DefaultAPIURL is Slack's Web API.
const DefaultAPIURL = "https://slack.com/api"

// Transport is the Slack transport, for cmd's list.
var Transport = transport.Descriptor{
	TransportSpec: domain.TransportSpec{
		Kind:    Kind,
		About:   "a Slack channel: its messages in (Events API), replies out in their thread (chat.postMessage)",
		Config:  `{"channel":"C0123ABCD","thread_ts":"1712345678.000100"}; thread_ts is optional and narrows the stream to one thread`,
		Check:   func(raw json.RawMessage) error { _, err := ParseStreamConfig(raw); return err },
		Publish: true,
		Contact: &domain.ContactSpec{Address: "a channel id, such as the D… of the human's DM with the bot", Stream: contactStream},
	},
	Settings:  Settings,
	Endpoints: func(d transport.Deps) []inbound.Endpoint { return []inbound.Endpoint{Endpoint(d.Store, d.Now)} },
	Sender:    func(d transport.Deps) delivery.Sender { return NewSender(d.Store, d.Client) },
}

// ConfigSetting is transport.slack, read on every request and send, so a
// change applies without a restart.
var ConfigSetting = domain.SettingSpec{
	Key: "transport.slack", Type: domain.SettingJSON, Default: "{}",
	Description: `Slack app: {"signing_secret":"…","bot_token":"xoxb-…","bot_user_id":"U…","api_url":"` + DefaultAPIURL + `"}. ` +
		`Events are refused (401) until signing_secret is set; bot_user_id is optional (the bot's own messages are also known by bot_id).`,
	SecretFields: []string{"signing_secret", "bot_token"},
	Validate:     func(v string) error { _, err := parseSettings(v); return err },
}

// MaxBodySetting bounds an event's body; a larger one gets 413.
var MaxBodySetting = domain.SettingSpec{
	Key: "transport.slack.max_body_bytes", Type: domain.SettingInt, Default: strconv.Itoa(1 << 20),
	Description: "Largest Slack Events API body accepted, in bytes.",
}

// Settings lists the Slack transport's config keys.
var Settings = domain.Settings{ConfigSetting, MaxBodySetting, delivery.MaxAttemptsSetting(Kind)}

// Config is the decoded transport.slack setting.
type Config struct {
	SigningSecret string `json:"signing_secret"`
	BotToken      string `json:"bot_token"`
	BotUserID     string `json:"bot_user_id"`
	APIURL        string `json:"api_url"`
}

var (
	hexSecret = regexp.MustCompile(`^[0-9a-f]{16,128}$`)
	botToken  = regexp.MustCompile(`^xoxb-[0-9A-Za-z-]+$`)
	userID    = regexp.MustCompile(`^[UW][0-9A-Z]{2,}$`)
	channelID = regexp.MustCompile(`^[CGD][0-9A-Z]{2,}$`)
	slackTS   = regexp.MustCompile(`^[0-9]{1,12}\.[0-9]{1,9}$`)
)

// parseSettings decodes and checks transport.slack. The receiver and the
// sender read it through here too, so a value `config set` accepts is one
// they work with. Errors name the key, never its value.
func parseSettings(raw string) (Config, error) {
	var c Config
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return c, fmt.Errorf("not a transport.slack object: %w: %w", stripValue(err), domain.ErrInvalid)
	}
	switch {
	case c.SigningSecret != "" && !hexSecret.MatchString(c.SigningSecret):
		return c, domain.Invalid("signing_secret", "must be the app's signing secret as Slack shows it: 16 to 128 lowercase hex digits, nothing around them")
	case c.BotToken != "" && !botToken.MatchString(c.BotToken):
		return c, domain.Invalid("bot_token", `must be a bot token: "xoxb-" then letters, digits and '-'`)
	case c.BotUserID != "" && !userID.MatchString(c.BotUserID):
		return c, domain.Invalid("bot_user_id", `must be a Slack user id such as "U0123ABCD"`)
	case c.APIURL != "":
		if err := domain.ValidateHTTPURL(c.APIURL); err != nil {
			return c, domain.Invalid("api_url", "%v", err)
		}
	}
	if c.APIURL == "" {
		c.APIURL = DefaultAPIURL
	}
	return c, nil
}

// settingReader is how both halves read transport.slack.
type settingReader interface {
	SettingOr(ctx context.Context, spec domain.SettingSpec) (string, error)
}

func loadConfig(ctx context.Context, st settingReader) (Config, error) {
	raw, err := st.SettingOr(ctx, ConfigSetting)
	if err != nil {
		return Config{}, err
	}
	c, err := parseSettings(raw)
	if err != nil {
		// Stored by hand or by an older version: ours to fix (500).
		return Config{}, errors.New("transport.slack cannot be used: " + err.Error())
	}
	return c, nil
}

// StreamConfig is a slack stream's config.
type StreamConfig struct {
	Channel  string `json:"channel"`
	ThreadTS string `json:"thread_ts,omitempty"`
}

// ParseStreamConfig decodes and checks a slack stream's config.
func ParseStreamConfig(raw json.RawMessage) (StreamConfig, error) {
	var c StreamConfig
	if err := domain.DecodeConfig(raw, &c); err != nil {
		return c, err
	}
	if c.Channel == "" {
		return c, domain.Required(domain.ConfigField("channel"))
	}
	if !channelID.MatchString(c.Channel) {
		return c, domain.Invalid(domain.ConfigField("channel"), "%q must be a channel id such as \"C0123ABCD\" (not a #name)", c.Channel)
	}
	if c.ThreadTS != "" && !slackTS.MatchString(c.ThreadTS) {
		return c, domain.Invalid(domain.ConfigField("thread_ts"), "%q must be a message ts such as \"1712345678.000100\"", c.ThreadTS)
	}
	return c, nil
}

// contactStream is the stream of a human reached in the channel address.
func contactStream(_, address string) (json.RawMessage, error) {
	if !channelID.MatchString(address) {
		return nil, domain.Invalid("address", "%q must be a Slack channel id, such as the \"D0123ABCD\" of the human's DM with the bot", address)
	}
	return json.Marshal(StreamConfig{Channel: address})
}

// stripValue keeps a JSON decoding error from quoting the value it choked
// on: the setting holds secrets.
func stripValue(err error) error {
	if se, ok := errors.AsType[*json.SyntaxError](err); ok {
		return fmt.Errorf("invalid JSON at offset %d", se.Offset)
	}
	if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
		return fmt.Errorf("wrong type for %s", te.Field)
	}
	if rest, ok := strings.CutPrefix(err.Error(), "json: unknown field"); ok {
		return errors.New("unknown field" + rest)
	}
	return errors.New("invalid JSON")
}
