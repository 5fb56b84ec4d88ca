package github

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/helixml/helix-org/domain"
)

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
