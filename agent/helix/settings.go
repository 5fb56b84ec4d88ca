package helix

import (
	"fmt"
	"net/url"

	"github.com/helixml/helix-org/domain"
)

// The helix runtime's config: where Helix is, the key it is called with,
// and what its agents run on. Read per run, so `config set` applies
// without a restart.
var (
	// helix.url and helix.org_url say where runs go and what they reach,
	// with the runs' tokens: RunsCode, so an import sets them only when told.
	URLSetting = domain.SettingSpec{Key: "helix.url", Type: domain.SettingString, Validate: validURL, RunsCode: true,
		Description: "Base URL of the Helix control plane the helix runtime runs activations on, e.g. https://helix.example.com."}
	APIKeySetting = domain.SettingSpec{Key: "helix.api_key", Type: domain.SettingString, Secret: true,
		Description: "Helix API key the helix runtime calls Helix with (encrypted at rest, never shown)."}
	ProviderSetting = domain.SettingSpec{Key: "helix.provider", Type: domain.SettingString,
		Description: "Inference provider, as Helix names it (GET /api/v1/providers), of each worker's Helix agent app."}
	ModelSetting = domain.SettingSpec{Key: "helix.model", Type: domain.SettingString,
		Description: "Model of that provider (GET /v1/models?provider=…) each worker's Helix agent app runs on."}
	OrganizationSetting = domain.SettingSpec{Key: "helix.organization_id", Type: domain.SettingString,
		Description: "Helix organization the workers' projects, apps and sessions belong to; empty is the API key's user's own."}
	DesktopQuotaSetting = domain.SettingSpec{Key: "helix.desktop_quota", Type: domain.SettingInt, Default: "4", Validate: validQuota,
		Description: "Most activations running on Helix at once (each holds a Helix desktop session); one more waits for a slot."}
	OrgURLSetting = domain.SettingSpec{Key: "helix.org_url", Type: domain.SettingString, Validate: validOptionalURL, RunsCode: true,
		Description: "This server's base URL as Helix's agents reach it, for each worker's MCP endpoint; empty is the URL agents on this host use."}
	PollSetting = domain.SettingSpec{Key: "helix.poll_interval", Type: domain.SettingDuration, Default: "2s",
		Description: "How often a run whose prompt went through its session's message queue reads the session's output, until the answer is complete."}
)

// Settings is every helix.* key, for the registry.
var Settings = domain.Settings{URLSetting, APIKeySetting, ProviderSetting, ModelSetting, OrganizationSetting, DesktopQuotaSetting, OrgURLSetting, PollSetting}

func validURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("want an http(s) URL such as https://helix.example.com")
	}
	return nil
}

func validOptionalURL(s string) error {
	if s == "" {
		return nil
	}
	return validURL(s)
}

func validQuota(s string) error {
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil || n < 1 {
		return fmt.Errorf("want a whole number of sessions, 1 or more")
	}
	return nil
}
