package domain

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"time"
)

// TransportKind names how a Stream connects to the outside world.
type TransportKind string

const (
	TransportLocal   TransportKind = "local"
	TransportWebhook TransportKind = "webhook"
	TransportEmail   TransportKind = "email"
	TransportGitHub  TransportKind = "github"
)

// TransportKinds lists the valid kinds.
var TransportKinds = []TransportKind{TransportLocal, TransportWebhook, TransportEmail, TransportGitHub}

// Validate rejects unknown kinds, naming the valid ones.
func (k TransportKind) Validate(field string) error {
	if !slices.Contains(TransportKinds, k) {
		return EnumError(field, "transport kind", k, TransportKinds)
	}
	return nil
}

// Well-known system streams.
const (
	// StreamOrg carries the audit trail of every org mutation.
	StreamOrg = "s-org"
	// ActivationStreamPrefix + worker id is that worker's activation log.
	ActivationStreamPrefix = "s-activations-"
	// DMStreamPrefix starts every direct-message stream.
	DMStreamPrefix = "s-dm-"
)

// Transport is a stream's connection: a kind plus kind-specific config.
type Transport struct {
	Kind   TransportKind   `json:"kind"`
	Config json.RawMessage `json:"config,omitempty"`
}

// Stream is a named pub/sub channel.
type Stream struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	Description string    `json:"description,omitempty"`
	Transport   Transport `json:"transport"`
	CreatedBy   string    `json:"createdBy,omitempty"`
	CreatedAt   time.Time `json:"createdAt"`
}

// Validate checks a stream, including its transport config, before storing.
func (s Stream) Validate() error {
	if s.ID != "" {
		if err := ValidateID("id", PrefixStream, s.ID); err != nil {
			return err
		}
	}
	if strings.TrimSpace(s.Name) == "" {
		return Required("name")
	}
	return s.Transport.Validate()
}

// Validate checks the kind and decodes the config strictly for that kind.
func (t Transport) Validate() error {
	if err := t.Kind.Validate("transport.kind"); err != nil {
		return err
	}
	switch t.Kind {
	case TransportLocal:
		var c struct{}
		return decodeConfig(t.Config, &c)
	case TransportWebhook:
		var c WebhookConfig
		if err := decodeConfig(t.Config, &c); err != nil {
			return err
		}
		return c.Validate()
	case TransportEmail:
		var c EmailConfig
		if err := decodeConfig(t.Config, &c); err != nil {
			return err
		}
		return c.Validate()
	case TransportGitHub:
		var c GitHubConfig
		if err := decodeConfig(t.Config, &c); err != nil {
			return err
		}
		return c.Validate()
	}
	return nil
}

// decodeConfig rejects unknown fields so a typo ("secert") is an error, not
// a silently ignored setting.
func decodeConfig(raw json.RawMessage, v any) error {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		raw = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return Invalid("transport.config", "%v", err)
	}
	return nil
}

// WebhookConfig configures a webhook stream. Both fields are optional.
type WebhookConfig struct {
	Secret      string `json:"secret,omitempty"`
	OutboundURL string `json:"outbound_url,omitempty"`
}

// Validate checks the secret format and the outbound URL.
func (c WebhookConfig) Validate() error {
	if c.Secret != "" && (!strings.HasPrefix(c.Secret, "whsec_") || len(c.Secret) < len("whsec_")+16) {
		return Invalid("transport.config.secret", "must be \"whsec_\" followed by a base64 key of at least 16 characters")
	}
	if c.OutboundURL != "" {
		if err := validateHTTPURL(c.OutboundURL); err != nil {
			return Invalid("transport.config.outbound_url", "%v", err)
		}
	}
	return nil
}

// EmailConfig routes inbound mail for <hash>+<alias>@… to a stream.
type EmailConfig struct {
	Alias string `json:"alias"`
}

// Validate checks the alias charset.
func (c EmailConfig) Validate() error {
	if c.Alias == "" {
		return Required("transport.config.alias")
	}
	for _, r := range c.Alias {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return Invalid("transport.config.alias", "%q may contain only lowercase letters, digits, '-' and '_'", c.Alias)
		}
	}
	if len(c.Alias) > 64 {
		return Invalid("transport.config.alias", "is longer than 64 characters")
	}
	return nil
}

// GitHubEvents lists the X-GitHub-Event names a github stream may select.
var GitHubEvents = []string{
	"issues", "issue_comment", "pull_request", "pull_request_review",
	"pull_request_review_comment", "push", "release", "discussion",
	"discussion_comment", "workflow_run", "check_run", "check_suite",
}

// GitHubConfig selects the repository and events a github stream receives.
type GitHubConfig struct {
	Repo   string   `json:"repo"`
	Events []string `json:"events"`
}

// Validate checks "owner/name" and the event names.
func (c GitHubConfig) Validate() error {
	owner, name, ok := strings.Cut(c.Repo, "/")
	if c.Repo == "" {
		return Required("transport.config.repo")
	}
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return Invalid("transport.config.repo", "%q must be \"owner/name\"", c.Repo)
	}
	if len(c.Events) == 0 {
		return Invalid("transport.config.events", "must list at least one event (valid: %s)", quoteList(GitHubEvents))
	}
	for _, e := range c.Events {
		if !slices.Contains(GitHubEvents, e) {
			return Invalid("transport.config.events", "unknown GitHub event %q (valid: %s)", e, quoteList(GitHubEvents))
		}
	}
	return nil
}

// RedactTransportConfig hides secrets in a transport config for display.
func RedactTransportConfig(raw json.RawMessage) json.RawMessage {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return raw
	}
	if _, ok := m["secret"]; ok {
		m["secret"] = Redacted
		b, _ := json.Marshal(m)
		return b
	}
	return raw
}
