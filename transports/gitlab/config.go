package gitlab

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/transports/delivery"
	"github.com/helixml/helix-org/transports/inbound"
	"github.com/helixml/helix-org/transports/transport"
)

// Kind is the GitLab transport's kind.
const Kind domain.TransportKind = "gitlab"

// DefaultAPIURL is GitLab.com's REST API; a self-managed instance's is
// https://<host>/api/v4.
const DefaultAPIURL = "https://gitlab.com/api/v4"

// Transport is the GitLab transport, for cmd's list: webhooks in, and
// what workers publish out as notes on the thread's issue or merge request.
var Transport = transport.Descriptor{
	TransportSpec: domain.TransportSpec{
		Kind:  Kind,
		About: "GitLab project or group webhooks in; replies out as notes on the thread's issue or merge request",
		Config: `{"project":"group/name","events":["issue","note","merge_request"],"secret":"<the webhook's secret token>"}; ` +
			`project is its path or numeric id`,
		Check:   func(raw json.RawMessage) error { _, err := ParseStreamConfig(raw); return err },
		Secrets: []string{"secret"},
		Publish: true,
	},
	Settings:  Settings,
	Endpoints: func(d transport.Deps) []inbound.Endpoint { return []inbound.Endpoint{Endpoint(d.Store)} },
	Sender:    func(d transport.Deps) delivery.Sender { return NewSender(d.Store, d.Client) },
}

// Events maps the X-Gitlab-Event header to the event names a gitlab
// stream selects; confidential issues and notes are their kinds too.
var Events = map[string]string{
	"Push Hook":                  "push",
	"Tag Push Hook":              "tag_push",
	"Issue Hook":                 "issue",
	"Confidential Issue Hook":    "issue",
	"Note Hook":                  "note",
	"Confidential Note Hook":     "note",
	"Merge Request Hook":         "merge_request",
	"Wiki Page Hook":             "wiki_page",
	"Pipeline Hook":              "pipeline",
	"Job Hook":                   "job",
	"Deployment Hook":            "deployment",
	"Release Hook":               "release",
	"Milestone Hook":             "milestone",
	"Feature Flag Hook":          "feature_flag",
	"Emoji Hook":                 "emoji",
	"Resource Access Token Hook": "access_token",
	"Vulnerability Hook":         "vulnerability",
}

// EventNames are the names a stream's events may list, sorted.
func EventNames() []string {
	var names []string
	for _, n := range Events {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}

// StreamConfig selects the project and events a gitlab stream receives,
// and holds the secret token its webhook sends.
type StreamConfig struct {
	Project string   `json:"project"`
	Events  []string `json:"events"`
	Secret  string   `json:"secret"`
}

// Secret tokens are the operator's to choose; this asks for one that is
// not guessable and that fits a header.
const (
	MinSecret = 16
	MaxSecret = 256
)

var (
	projectPath = domain.LazyRegexp(`^[A-Za-z0-9_.][A-Za-z0-9_.-]*(/[A-Za-z0-9_.][A-Za-z0-9_.-]*)+$`)
	projectID   = domain.LazyRegexp(`^[1-9][0-9]{0,18}$`)
	tokenChars  = domain.LazyRegexp(`^[\x21-\x7e]+$`)
)

// ParseStreamConfig decodes and checks a gitlab stream's config. Errors
// never quote the secret.
func ParseStreamConfig(raw json.RawMessage) (StreamConfig, error) {
	var c StreamConfig
	if err := domain.DecodeConfig(raw, &c); err != nil {
		return c, err
	}
	switch {
	case c.Project == "":
		return c, domain.Required(domain.ConfigField("project"))
	case !projectPath().MatchString(c.Project) && !projectID().MatchString(c.Project):
		return c, domain.Invalid(domain.ConfigField("project"), "%q must be a project's path, such as \"group/name\", or its numeric id", c.Project)
	case len(c.Events) == 0:
		return c, domain.Invalid(domain.ConfigField("events"), "must list at least one event (valid: %s)", strings.Join(EventNames(), ", "))
	}
	for _, e := range c.Events {
		if !slices.Contains(EventNames(), e) {
			return c, domain.EnumError(domain.ConfigField("events"), "GitLab event", e, EventNames())
		}
	}
	switch {
	case c.Secret == "":
		return c, domain.Invalid(domain.ConfigField("secret"), "is required: the secret token set on the GitLab webhook, which it sends as X-Gitlab-Token")
	case len(c.Secret) < MinSecret || len(c.Secret) > MaxSecret || !tokenChars().MatchString(c.Secret):
		return c, domain.Invalid(domain.ConfigField("secret"), "must be %d to %d printable characters without spaces", MinSecret, MaxSecret)
	}
	return c, nil
}

// follows reports whether the stream takes an event of the project, by
// path (any case) or id.
func (c StreamConfig) follows(p project, event string) bool {
	if !slices.Contains(c.Events, event) {
		return false
	}
	if projectID().MatchString(c.Project) {
		return p.ID > 0 && c.Project == strconv.FormatInt(p.ID, 10)
	}
	return p.Path != "" && strings.EqualFold(c.Project, p.Path)
}

// DefaultMaxBody bounds a webhook's body: GitLab's own payloads stay far
// below it.
const DefaultMaxBody = 25 << 20

// setting is transport.gitlab, read on every send so a new token
// applies without a restart.
var setting = transport.NewSetting("gitlab",
	`GitLab: {"token":"glpat-…","api_url":"`+DefaultAPIURL+`"}: an access token that may comment on the projects' issues and merge requests `+
		`(api scope; notes wait until it is set), and the REST API of a self-managed instance. Webhook secrets are each stream's own.`,
	[]string{"token"}, parseSettings)

// ConfigSetting is transport.gitlab's spec.
var ConfigSetting = setting.SettingSpec

// MaxBodySetting bounds a webhook's body; a larger one gets 413.
var MaxBodySetting = inbound.MaxBodySetting(ConfigSetting.Key, DefaultMaxBody,
	"Largest GitLab webhook body accepted, in bytes.")

// Settings lists the GitLab transport's config keys.
var Settings = domain.Settings{ConfigSetting, MaxBodySetting, delivery.MaxAttemptsSetting(Kind)}

// Config is the decoded transport.gitlab setting.
type Config struct {
	Token  string `json:"token"`
	APIURL string `json:"api_url"`
}

// parseSettings decodes and checks transport.gitlab; the sender reads it
// through here too. Errors never quote the token.
func parseSettings(raw string) (Config, error) {
	var c Config
	if err := transport.DecodeSettings("transport.gitlab", raw, &c); err != nil {
		return c, err
	}
	if c.Token != "" && !tokenChars().MatchString(c.Token) {
		return c, domain.Invalid("token", "must be an access token as GitLab shows it, without spaces or line breaks")
	}
	return c, transport.URL("api_url", &c.APIURL, DefaultAPIURL)
}

// Sendable is nil once the token a note needs is set.
func (c Config) Sendable() error { return delivery.Need(ConfigSetting.Key, "token", c.Token) }
