package github

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/transports/inbound"
	"github.com/helixml/helix-org/transports/transport"
)

// Kind is the GitHub transport's kind.
const Kind domain.TransportKind = "github"

// Transport is the GitHub transport, for cmd's list. It only receives:
// a worker acts on GitHub through its own tools.
var Transport = transport.Descriptor{
	TransportSpec: domain.TransportSpec{
		Kind:   Kind,
		About:  "GitHub repository webhooks in; nothing goes out (act on GitHub through your own GitHub tools)",
		Config: `{"repo":"owner/name","events":["issues","pull_request"]}`,
		Check:  func(raw json.RawMessage) error { _, err := ParseStreamConfig(raw); return err },
	},
	Settings:  Settings,
	Endpoints: func(d transport.Deps) []inbound.Endpoint { return []inbound.Endpoint{Endpoint(d.Store)} },
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

// ConfigSetting is transport.github: {"webhook_secret":"…"}. It is read on
// every request, so a new secret applies without a restart.
var ConfigSetting = domain.SettingSpec{
	Key: "transport.github", Type: domain.SettingJSON, Default: "{}",
	Description:  `GitHub webhooks: {"webhook_secret":"…"}, the secret set on the repository's webhook. Deliveries are refused (401) until it is set.`,
	SecretFields: []string{"webhook_secret"},
}

// MaxBodySetting bounds a delivery's body; a larger one gets 413.
var MaxBodySetting = domain.SettingSpec{
	Key: "transport.github.max_body_bytes", Type: domain.SettingInt, Default: strconv.Itoa(DefaultMaxBody),
	Description: "Largest GitHub webhook body accepted, in bytes (GitHub caps payloads at 25 MB).",
}

// Settings lists the GitHub transport's config keys.
var Settings = domain.Settings{ConfigSetting, MaxBodySetting}

// Config is the decoded transport.github setting.
type Config struct {
	WebhookSecret string `json:"webhook_secret"`
}

func loadConfig(ctx context.Context, st Store) (Config, error) {
	raw, err := st.SettingOr(ctx, ConfigSetting)
	if err != nil {
		return Config{}, err
	}
	var c Config
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		// The value never appears in the error: it holds the secret.
		return Config{}, fmt.Errorf("%s is not a valid JSON object", ConfigSetting.Key)
	}
	return c, nil
}
