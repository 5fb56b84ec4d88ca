package domain_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/helixml/helix-org/domain"
)

func TestSlug(t *testing.T) {
	tests := []struct{ prefix, name, want string }{
		{"w-", "Maya", "w-maya"},
		{"r-", "Support Engineer", "r-support-engineer"},
		{"s-", "  inbox -- EU!! ", "s-inbox-eu"},
		{"p-", "Ünïcode Ωmega 2", "p-n-code-mega-2"},
	}
	for _, tt := range tests {
		if got := domain.Slug(tt.prefix, tt.name); got != tt.want {
			t.Errorf("Slug(%q, %q) = %q, want %q", tt.prefix, tt.name, got, tt.want)
		}
		if err := domain.ValidateID("id", tt.prefix, domain.Slug(tt.prefix, tt.name)); err != nil {
			t.Errorf("slug of %q is not a valid id: %v", tt.name, err)
		}
	}
	if got := domain.Slug("w-", "!!!"); !strings.HasPrefix(got, "w-") || len(got) != 10 {
		t.Errorf("Slug of nothing = %q, want a random w- slug", got)
	}
	if got := domain.Slug("w-", strings.Repeat("a", 200)); len(got) > domain.MaxIDLen {
		t.Errorf("long slug is %d chars", len(got))
	}
}

func TestValidateID(t *testing.T) {
	tests := []struct {
		id, prefix string
		ok         bool
	}{
		{"w-maya", "w-", true},
		{"w-maya-2", "w-", true},
		{"maya", "w-", false},
		{"w-Maya", "w-", false},
		{"w-maya--x", "w-", false},
		{"w-", "w-", false},
		{"w-" + strings.Repeat("a", 70), "w-", false},
		{"s-inbox", "w-", false},
	}
	for _, tt := range tests {
		err := domain.ValidateID("id", tt.prefix, tt.id)
		if (err == nil) != tt.ok {
			t.Errorf("ValidateID(%q) = %v, want ok=%v", tt.id, err, tt.ok)
		}
		if err != nil && !errors.Is(err, domain.ErrInvalid) {
			t.Errorf("ValidateID error %v is not ErrInvalid", err)
		}
	}
}

func TestValidationErrorsNameFieldAndValidValues(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want []string
	}{
		{"worker kind", domain.Worker{Kind: "bot", PositionID: "p-x", Name: "x"}.Validate(), []string{"kind", `unknown worker kind "bot"`, `"human", "ai"`}},
		{"transport kind", domain.Transport{Kind: "fax"}.Validate(), []string{"transport.kind", `"local", "webhook", "email", "github"`}},
		{"local with config", domain.Transport{Kind: "local", Config: json.RawMessage(`{"x":1}`)}.Validate(), []string{"transport.config", `unknown field "x"`}},
		{"webhook bad secret", domain.Transport{Kind: "webhook", Config: json.RawMessage(`{"secret":"abc"}`)}.Validate(), []string{"transport.config.secret", "whsec_"}},
		{"webhook bad url", domain.Transport{Kind: "webhook", Config: json.RawMessage(`{"outbound_url":"ftp://x"}`)}.Validate(), []string{"outbound_url", "http or https"}},
		{"webhook typo", domain.Transport{Kind: "webhook", Config: json.RawMessage(`{"secert":"whsec_x"}`)}.Validate(), []string{`unknown field "secert"`}},
		{"email no alias", domain.Transport{Kind: "email"}.Validate(), []string{"transport.config.alias", "required"}},
		{"email bad alias", domain.Transport{Kind: "email", Config: json.RawMessage(`{"alias":"Sam!"}`)}.Validate(), []string{"alias", "lowercase"}},
		{"github bad repo", domain.Transport{Kind: "github", Config: json.RawMessage(`{"repo":"nope","events":["issues"]}`)}.Validate(), []string{"repo", "owner/name"}},
		{"github bad event", domain.Transport{Kind: "github", Config: json.RawMessage(`{"repo":"a/b","events":["push","nope"]}`)}.Validate(), []string{"events", `"nope"`, `"issues"`}},
		{"message no body", domain.Message{}.Validate(0), []string{"body", "required"}},
		{"message too big", domain.Message{Body: "12345"}.Validate(4), []string{"body", "limit is 4"}},
		{"message bad extra", domain.Message{Body: "x", Extra: json.RawMessage("{")}.Validate(0), []string{"extra", "JSON"}},
		{"role no title", domain.Role{}.Validate(), []string{"title", "required"}},
		{"position self", domain.Position{ID: "p-a", RoleID: "r-a", Title: "A", ReportsTo: "p-a"}.Validate(), []string{"reportsTo", "itself"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(tt.err, domain.ErrInvalid) {
				t.Errorf("%v is not ErrInvalid", tt.err)
			}
			for _, w := range tt.want {
				if !strings.Contains(tt.err.Error(), w) {
					t.Errorf("error %q lacks %q", tt.err, w)
				}
			}
		})
	}
}

func TestValidTransportsPass(t *testing.T) {
	for _, cfg := range []domain.Transport{
		{Kind: "local"},
		{Kind: "webhook", Config: json.RawMessage(`{"secret":"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw","outbound_url":"https://example.com/hook"}`)},
		{Kind: "email", Config: json.RawMessage(`{"alias":"sam_support-1"}`)},
		{Kind: "github", Config: json.RawMessage(`{"repo":"helixml/helix-org","events":["issues","pull_request"]}`)},
	} {
		if err := cfg.Validate(); err != nil {
			t.Errorf("%s: %v", cfg.Kind, err)
		}
	}
}

func TestSettingSpecCheckAndRedact(t *testing.T) {
	tests := []struct {
		spec  domain.SettingSpec
		value string
		ok    bool
	}{
		{domain.SettingSpec{Key: "i", Type: domain.SettingInt}, "42", true},
		{domain.SettingSpec{Key: "i", Type: domain.SettingInt}, "4x", false},
		{domain.SettingSpec{Key: "b", Type: domain.SettingBool}, "true", true},
		{domain.SettingSpec{Key: "b", Type: domain.SettingBool}, "yes", false},
		{domain.SettingSpec{Key: "d", Type: domain.SettingDuration}, "90s", true},
		{domain.SettingSpec{Key: "d", Type: domain.SettingDuration}, "90", false},
		{domain.SettingSpec{Key: "j", Type: domain.SettingJSON}, `{"a":1}`, true},
		{domain.SettingSpec{Key: "j", Type: domain.SettingJSON}, `[1]`, false},
		{domain.SettingSpec{Key: "e", Type: domain.SettingString, Enum: []string{"a", "b"}}, "c", false},
	}
	for _, tt := range tests {
		if err := tt.spec.Check(tt.value); (err == nil) != tt.ok {
			t.Errorf("%s.Check(%q) = %v, want ok=%v", tt.spec.Key, tt.value, err, tt.ok)
		}
	}
	secret := domain.SettingSpec{Key: "k", Secret: true}
	if got := secret.Redact("sk-123"); got != domain.Redacted {
		t.Errorf("secret redacted to %q", got)
	}
	mixed := domain.SettingSpec{Key: "p", Type: domain.SettingJSON, SecretFields: []string{"server_token"}}
	got := mixed.Redact(`{"server_token":"tok-1","from":"a@b.c"}`)
	if strings.Contains(got, "tok-1") || !strings.Contains(got, "a@b.c") {
		t.Errorf("mixed JSON redacted to %q", got)
	}
	if _, err := (domain.Settings{secret}).Lookup("nope"); err == nil || !strings.Contains(err.Error(), `valid: k`) {
		t.Errorf("Lookup of unknown key: %v", err)
	}
}

func TestMCPConfigRoundTrip(t *testing.T) {
	url, tok, err := domain.ReadMCPConfig(domain.MCPConfig("http://127.0.0.1:8080/workers/w-a/mcp", "hxo_abc"))
	if err != nil || url != "http://127.0.0.1:8080/workers/w-a/mcp" || tok != "hxo_abc" {
		t.Errorf("round trip = %q %q %v", url, tok, err)
	}
}
