package github

import (
	"cmp"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/transports/delivery"
	"github.com/helixml/helix-org/transports/inbound"
	"github.com/helixml/helix-org/transports/transport"
)

// Kind is the GitHub transport's kind.
const Kind domain.TransportKind = "github"

// Transport is the GitHub transport, for cmd's list: webhooks in, and
// what workers publish out as comments on the thread's issue.
var Transport = transport.Descriptor{
	TransportSpec: domain.TransportSpec{
		Kind:    Kind,
		About:   "GitHub repository webhooks in; replies out as comments on the thread's issue or pull request",
		Config:  `{"repo":"owner/name","events":["issues","pull_request"]}`,
		Check:   func(raw json.RawMessage) error { _, err := ParseStreamConfig(raw); return err },
		Publish: true,
	},
	Settings:  Settings,
	Endpoints: func(d transport.Deps) []inbound.Endpoint { return []inbound.Endpoint{Endpoint(d.Store)} },
	Sender:    func(d transport.Deps) delivery.Sender { return NewSender(d.Store, d.Client) },
}

// Events lists the X-GitHub-Event names a github stream may select.
var Events = []string{
	"issues", "issue_comment", "pull_request", "pull_request_review",
	"pull_request_review_comment", "push", "release", "discussion",
	"discussion_comment", "workflow_run", "check_run", "check_suite",
}

// StreamConfig selects the repository and events a github stream receives.
type StreamConfig struct {
	Repo   string   `json:"repo"`
	Events []string `json:"events"`
}

// ParseStreamConfig decodes and checks "owner/name" and the event names.
func ParseStreamConfig(raw json.RawMessage) (StreamConfig, error) {
	var c StreamConfig
	if err := domain.DecodeConfig(raw, &c); err != nil {
		return c, err
	}
	owner, name, ok := strings.Cut(c.Repo, "/")
	if c.Repo == "" {
		return c, domain.Required(domain.ConfigField("repo"))
	}
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return c, domain.Invalid(domain.ConfigField("repo"), "%q must be \"owner/name\"", c.Repo)
	}
	if len(c.Events) == 0 {
		return c, domain.Invalid(domain.ConfigField("events"), "must list at least one event (valid: %s)", strings.Join(Events, ", "))
	}
	for _, e := range c.Events {
		if !slices.Contains(Events, e) {
			return c, domain.EnumError(domain.ConfigField("events"), "GitHub event", e, Events)
		}
	}
	return c, nil
}

// DefaultMaxBody is GitHub's own payload cap (25 MB): GitHub never sends a
// larger delivery, so anything bigger is not from GitHub.
const DefaultMaxBody = 25 << 20

// setting is transport.github. It is read on every request and
// send, so a new secret or token applies without a restart.
var setting = transport.NewSetting("github",
	`GitHub: {"webhook_secret":"…","token":"…","api_url":"`+DefaultAPIURL+`"}: the repository webhook's secret (deliveries are refused (401) until it is set) `+
		`and a token that may comment on its issues (comments wait until it is set).`,
	[]string{"webhook_secret", "token"}, parseSettings)

// ConfigSetting is transport.github's spec.
var ConfigSetting = setting.SettingSpec

// MaxBodySetting bounds a delivery's body; a larger one gets 413.
var MaxBodySetting = inbound.MaxBodySetting(ConfigSetting.Key, DefaultMaxBody,
	"Largest GitHub webhook body accepted, in bytes (GitHub caps payloads at 25 MB).")

// Settings lists the GitHub transport's config keys.
var Settings = domain.Settings{ConfigSetting, MaxBodySetting, delivery.MaxAttemptsSetting(Kind)}

// Config is the decoded transport.github setting.
type Config struct {
	WebhookSecret string `json:"webhook_secret"`
	Token         string `json:"token"`
	APIURL        string `json:"api_url"`
}

// parseSettings decodes transport.github; a value that is not an object
// is refused without quoting it (it holds the secret).
func parseSettings(raw string) (Config, error) {
	var c Config
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		return c, errors.New("not a JSON object")
	}
	c.APIURL = cmp.Or(c.APIURL, DefaultAPIURL)
	return c, nil
}

// Sendable is nil once the token a comment needs is set.
func (c Config) Sendable() error { return delivery.Need(ConfigSetting.Key, "token", c.Token) }
