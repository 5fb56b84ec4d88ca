package helix

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/safedial"
)

// Config is the helix.* settings as one run reads them.
type Config struct {
	URL, APIKey, Provider, Model, Organization, OrgURL string
	Quota                                              int
	Poll                                               time.Duration
}

// ReadConfig reads helix.* from the store's settings.
func ReadConfig(ctx context.Context, st agent.SettingReader) Config {
	get := func(spec domain.SettingSpec) string { v, _ := st.SettingOr(ctx, spec); return v }
	poll, err := time.ParseDuration(get(PollSetting))
	if err != nil || poll <= 0 {
		poll = 2 * time.Second
	}
	return Config{URL: get(URLSetting), APIKey: get(APIKeySetting), Provider: get(ProviderSetting), Model: get(ModelSetting),
		Organization: get(OrganizationSetting), OrgURL: get(OrgURLSetting), Quota: max(1, int(st.IntSetting(ctx, DesktopQuotaSetting))), Poll: poll}
}

// Missing names the keys a run on Helix needs that are not set.
func (c Config) Missing() error {
	var keys []string
	for _, kv := range []struct{ key, val string }{{URLSetting.Key, c.URL}, {APIKeySetting.Key, c.APIKey}, {ProviderSetting.Key, c.Provider}, {ModelSetting.Key, c.Model}} {
		if kv.val == "" {
			keys = append(keys, kv.key)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	return fmt.Errorf("the helix runtime needs %s: set with `helix-org config set <key> <value>`, then check with `helix-org bootstrap helix-runtime`", strings.Join(keys, ", "))
}

// NewClient is the client of c's Helix, through safedial: allowPrivate
// (transport.webhook.allow_private) lets it reach a Helix on this host or
// network.
func NewClient(c Config, allowPrivate func(context.Context) bool) *Client {
	// No overall timeout: a streamed chat lasts as long as its answer;
	// the run's context bounds it.
	hc := safedial.NewClient(safedial.Options{AllowPrivate: allowPrivate, Timeout: 24 * time.Hour})
	return &Client{BaseURL: c.URL, APIKey: c.APIKey, HTTP: hc}
}

// Check is what bootstrap and serve ask of Helix before runs go to it: the
// key is good (whose it is), and the configured provider and model exist
// there. Its errors name the key to fix.
func Check(ctx context.Context, cl *Client, c Config) (UserStatus, error) {
	if err := c.Missing(); err != nil {
		return UserStatus{}, err
	}
	me, err := cl.WhoAmI(ctx)
	if err != nil {
		if se := (*StatusError)(nil); errors.As(err, &se) && (se.Code == http.StatusUnauthorized || se.Code == http.StatusForbidden) {
			return me, fmt.Errorf("%s is refused by Helix at %s (%d): set a valid key with `helix-org config set %s <key>`", APIKeySetting.Key, c.URL, se.Code, APIKeySetting.Key)
		}
		return me, fmt.Errorf("cannot reach Helix at %s (%s): %w", c.URL, URLSetting.Key, err)
	}
	providers, err := cl.Providers(ctx)
	if err != nil {
		return me, fmt.Errorf("list Helix's providers: %w", err)
	}
	if !slices.Contains(providers, c.Provider) {
		return me, fmt.Errorf("%s %q is not a provider Helix has (it has: %s): fix it with `helix-org config set %s <provider>`",
			ProviderSetting.Key, c.Provider, strings.Join(providers, ", "), ProviderSetting.Key)
	}
	models, err := cl.Models(ctx, c.Provider)
	if err != nil {
		return me, fmt.Errorf("list the models of Helix's provider %s: %w", c.Provider, err)
	}
	ids := make([]string, len(models))
	for i, m := range models {
		ids[i] = m.ID
	}
	if !slices.Contains(ids, c.Model) {
		return me, fmt.Errorf("%s %q is not a model of Helix's provider %s (it has: %s): fix it with `helix-org config set %s <model>`",
			ModelSetting.Key, c.Model, c.Provider, strings.Join(ids, ", "), ModelSetting.Key)
	}
	return me, nil
}
