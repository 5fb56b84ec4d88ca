package slack

import (
	"cmp"
	"context"
	"encoding/json"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/transports/delivery"
	"github.com/helixml/helix-org/transports/inbound"
	"github.com/helixml/helix-org/transports/transport"
)

// Kind is the Slack transport's kind.
const Kind domain.TransportKind = "slack"

// DefaultAPIURL is Slack's Web API.
const DefaultAPIURL = "https://slack.com/api"

// DefaultOAuthURL is where Slack asks a person to install an app.
const DefaultOAuthURL = "https://slack.com/oauth/v2/authorize"

// Transport is the Slack transport, for cmd's list.
var Transport = transport.Descriptor{
	TransportSpec: domain.TransportSpec{
		Kind:  Kind,
		About: "a Slack channel, or the messages naming a worker: in by the Events API or Socket Mode, replies out in their thread (chat.postMessage)",
		Config: `{"channel":"C0123ABCD","thread_ts":"1712345678.000100"}, thread_ts optional (one thread); ` +
			`or {"worker":"w-id"} for the messages naming the worker (@its name or id, or <@user> of "user":"U…") and the threads it is in, "channel" optional`,
		Check:   func(raw json.RawMessage) error { _, err := ParseStreamConfig(raw); return err },
		Publish: true,
		Contact: &domain.ContactSpec{Address: "a channel id, such as the D… of the human's DM with the bot", Stream: contactStream},
	},
	Settings:  Settings,
	Endpoints: func(d transport.Deps) []inbound.Endpoint { return []inbound.Endpoint{Endpoint(d.Store, d.Now)} },
	Handlers:  func(d transport.Deps) []transport.Route { return Install(d.Store, d.Client, d.Operator, d.Logger) },
	Sender:    func(d transport.Deps) delivery.Sender { return NewSender(d.Store, d.Client) },
	Run: func(ctx context.Context, d transport.Deps) error {
		return (&SocketMode{Store: d.Store, Client: d.Client, Logger: d.Logger}).Run(ctx)
	},
}

// setting is transport.slack, read on every request and send, so a
// change applies without a restart.
var setting = transport.NewSetting("slack",
	`Slack app: {"signing_secret":"…","bot_token":"xoxb-…","bot_user_id":"U…","app_token":"xapp-…","client_id":"…","client_secret":"…",`+
		`"api_url":"`+DefaultAPIURL+`","oauth_url":"`+DefaultOAuthURL+`","redirect_url":"https://…/slack/oauth/callback"}. `+
		`Events API requests are refused (401) until signing_secret is set; with app_token (connections:write) the server holds a Socket Mode connection instead of needing a public URL; `+
		`client_id and client_secret let the owner install the app at /ui/slack/install, which stores bot_token and bot_user_id; bot_user_id is optional.`,
	[]string{"signing_secret", "bot_token", "app_token", "client_secret"}, parseSettings)

// ConfigSetting is transport.slack's spec.
var ConfigSetting = setting.SettingSpec

// MaxBodySetting bounds an event's body; a larger one gets 413.
var MaxBodySetting = inbound.MaxBodySetting(ConfigSetting.Key, 1<<20,
	"Largest Slack Events API body accepted, in bytes.")

// Settings lists the Slack transport's config keys.
var Settings = domain.Settings{ConfigSetting, MaxBodySetting, delivery.MaxAttemptsSetting(Kind)}

// Config is the decoded transport.slack setting.
type Config struct {
	SigningSecret string `json:"signing_secret,omitempty"`
	BotToken      string `json:"bot_token,omitempty"`
	BotUserID     string `json:"bot_user_id,omitempty"`
	// AppToken is the app-level token Socket Mode connects with.
	AppToken string `json:"app_token,omitempty"`
	// ClientID and ClientSecret are the app's OAuth credentials, for the
	// install flow.
	ClientID     string `json:"client_id,omitempty"`
	ClientSecret string `json:"client_secret,omitempty"`
	APIURL       string `json:"api_url,omitempty"`
	OAuthURL     string `json:"oauth_url,omitempty"`
	// RedirectURL is the install flow's callback as the app lists it;
	// empty lets Slack use the app's only one.
	RedirectURL string `json:"redirect_url,omitempty"`
}

var (
	hexSecret = domain.LazyRegexp(`^[0-9a-f]{16,128}$`)
	botToken  = domain.LazyRegexp(`^xoxb-[0-9A-Za-z-]+$`)
	appToken  = domain.LazyRegexp(`^xapp-[0-9A-Za-z-]+$`)
	clientID  = domain.LazyRegexp(`^[0-9]{1,20}\.[0-9]{1,20}$`)
	userID    = domain.LazyRegexp(`^[UW][0-9A-Z]{2,}$`)
	channelID = domain.LazyRegexp(`^[CGD][0-9A-Z]{2,}$`)
	slackTS   = domain.LazyRegexp(`^[0-9]{1,12}\.[0-9]{1,9}$`)
)

// parseSettings decodes and checks transport.slack. The receiver and the
// sender read it through here too, so a value `config set` accepts is one
// they work with. Errors name the key, never its value.
func parseSettings(raw string) (Config, error) {
	var c Config
	if err := transport.DecodeSettings("transport.slack", raw, &c); err != nil {
		return c, err
	}
	switch {
	case c.SigningSecret != "" && !hexSecret().MatchString(c.SigningSecret):
		return c, domain.Invalid("signing_secret", "must be the app's signing secret as Slack shows it: 16 to 128 lowercase hex digits, nothing around them")
	case c.BotToken != "" && !botToken().MatchString(c.BotToken):
		return c, domain.Invalid("bot_token", `must be a bot token: "xoxb-" then letters, digits and '-'`)
	case c.BotUserID != "" && !userID().MatchString(c.BotUserID):
		return c, domain.Invalid("bot_user_id", `must be a Slack user id such as "U0123ABCD"`)
	case c.AppToken != "" && !appToken().MatchString(c.AppToken):
		return c, domain.Invalid("app_token", `must be an app-level token: "xapp-" then letters, digits and '-'`)
	case c.ClientID != "" && !clientID().MatchString(c.ClientID):
		return c, domain.Invalid("client_id", `must be the app's Client ID as Slack shows it, such as "1234567890.1234567890"`)
	case c.ClientSecret != "" && !hexSecret().MatchString(c.ClientSecret):
		return c, domain.Invalid("client_secret", "must be the app's Client Secret as Slack shows it: lowercase hex digits, nothing around them")
	}
	return c, cmp.Or(transport.URL("api_url", &c.APIURL, DefaultAPIURL),
		transport.URL("oauth_url", &c.OAuthURL, DefaultOAuthURL),
		transport.URL("redirect_url", &c.RedirectURL, ""))
}

// Sendable is nil once the bot token a message needs is set.
func (c Config) Sendable() error { return delivery.Need(ConfigSetting.Key, "bot_token", c.BotToken) }

// StreamConfig is a slack stream's config: a channel's messages (or one
// thread's), or a worker's — those naming it and the threads it is in.
type StreamConfig struct {
	Channel  string `json:"channel,omitempty"`
	ThreadTS string `json:"thread_ts,omitempty"`
	// Worker makes the stream the worker's: a message naming it (in
	// Channel, when set) is appended here, and so is the rest of each
	// thread it was named in or answered in.
	Worker string `json:"worker,omitempty"`
	// User is a Slack user standing for the worker, whose <@mention>
	// names it too.
	User string `json:"user,omitempty"`
}

// ParseStreamConfig decodes and checks a slack stream's config.
func ParseStreamConfig(raw json.RawMessage) (StreamConfig, error) {
	var c StreamConfig
	if err := domain.DecodeConfig(raw, &c); err != nil {
		return c, err
	}
	if c.Worker != "" || c.User != "" {
		return c, checkWorkerStream(c)
	}
	if c.Channel == "" {
		return c, domain.Invalid(domain.ConfigField("channel"), `is required: a channel id such as "C0123ABCD", or "worker" for a worker's stream`)
	}
	if !channelID().MatchString(c.Channel) {
		return c, domain.Invalid(domain.ConfigField("channel"), "%q must be a channel id such as \"C0123ABCD\" (not a #name)", c.Channel)
	}
	if c.ThreadTS != "" && !slackTS().MatchString(c.ThreadTS) {
		return c, domain.Invalid(domain.ConfigField("thread_ts"), "%q must be a message ts such as \"1712345678.000100\"", c.ThreadTS)
	}
	return c, nil
}

// checkWorkerStream checks the config of a worker's stream.
func checkWorkerStream(c StreamConfig) error {
	if c.Worker == "" {
		return domain.Invalid(domain.ConfigField("worker"), "is required with user: the worker the Slack user stands for")
	}
	if err := domain.ValidateID(domain.ConfigField("worker"), domain.PrefixWorker, c.Worker); err != nil {
		return err
	}
	switch {
	case c.User != "" && !userID().MatchString(c.User):
		return domain.Invalid(domain.ConfigField("user"), "%q must be a Slack user id such as \"U0123ABCD\"", c.User)
	case c.ThreadTS != "":
		return domain.Invalid(domain.ConfigField("thread_ts"), "goes without worker: a worker's stream follows the threads it is in")
	case c.Channel != "" && !channelID().MatchString(c.Channel):
		return domain.Invalid(domain.ConfigField("channel"), "%q must be a channel id such as \"C0123ABCD\" (not a #name)", c.Channel)
	}
	return nil
}

// contactStream is the stream of a human reached in the channel address.
func contactStream(_, address string) (json.RawMessage, error) {
	if !channelID().MatchString(address) {
		return nil, domain.Invalid("address", "%q must be a Slack channel id, such as the \"D0123ABCD\" of the human's DM with the bot", address)
	}
	return json.Marshal(StreamConfig{Channel: address})
}
