package domain_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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
		{"transport kind", testTransports.Validate(domain.Transport{Kind: "fax"}), []string{"transport.kind", `"local", "pager"`}},
		{"local with config", testTransports.Validate(domain.Transport{Kind: "local", Config: json.RawMessage(`{"x":1}`)}), []string{"transport.config", `unknown field "x"`}},
		{"kind's own check", testTransports.Validate(domain.Transport{Kind: "pager", Config: json.RawMessage(`{"number":"x"}`)}), []string{"transport.config.number", "digits"}},
		{"kind's typo", testTransports.Validate(domain.Transport{Kind: "pager", Config: json.RawMessage(`{"numbr":"1"}`)}), []string{`unknown field "numbr"`}},
		{"no registry knows only local", (*domain.Transports)(nil).Validate(domain.Transport{Kind: "pager"}), []string{"transport.kind", `(valid: "local")`}},
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

// testTransports is a registry with one made-up kind: the core knows
// transports only through what a kind's package declares.
var testTransports = domain.NewTransports(domain.TransportSpec{Kind: "pager", Secrets: []string{"pin"},
	Check: func(raw json.RawMessage) error {
		var c struct {
			Number string `json:"number"`
			Pin    string `json:"pin"`
		}
		if err := domain.DecodeConfig(raw, &c); err != nil {
			return err
		}
		if strings.Trim(c.Number, "0123456789") != "" {
			return domain.Invalid(domain.ConfigField("number"), "must be digits")
		}
		return nil
	}})

func TestTransportsRegistry(t *testing.T) {
	for _, cfg := range []domain.Transport{
		{Kind: "local"},
		{Kind: "local", Config: json.RawMessage("null")},
		{Kind: "pager", Config: json.RawMessage(`{"number":"123","pin":"0000"}`)},
	} {
		if err := testTransports.Validate(cfg); err != nil {
			t.Errorf("%s %s: %v", cfg.Kind, cfg.Config, err)
		}
	}
	if diff := cmp.Diff([]domain.TransportKind{"local", "pager"}, testTransports.Kinds()); diff != "" {
		t.Errorf("kinds (-want +got):\n%s", diff)
	}
	for _, tt := range []struct{ config, want string }{
		{`{"number":"123","pin":"0000"}`, `{"number":"123","pin":"********"}`},
		{`{"number":"123","pin":""}`, `{"number":"123","pin":""}`},
		{`[1]`, `"********"`},
	} {
		got := testTransports.Redact(domain.Transport{Kind: "pager", Config: json.RawMessage(tt.config)})
		if string(got.Config) != tt.want {
			t.Errorf("Redact(%s) = %s, want %s", tt.config, got.Config, tt.want)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("a kind listed twice was accepted")
		}
	}()
	domain.NewTransports(domain.TransportSpec{Kind: "local"})
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
	if _, err := (domain.Settings{secret}).Lookup("nope"); err == nil || !strings.Contains(err.Error(), `unknown config key "nope"`) {
		t.Errorf("Lookup of unknown key: %v", err)
	}
}

// TestMCPConfigHoldsNoToken: the file refers to the token's and the
// URL's variables, and reading it back expands them as Claude Code would.
func TestMCPConfigHoldsNoToken(t *testing.T) {
	data := domain.MCPConfig()
	if !strings.Contains(string(data), `"Authorization": "Bearer ${HELIX_ORG_TOKEN}"`) || !strings.Contains(string(data), `"url": "${HELIX_ORG_MCP_URL}"`) {
		t.Errorf("mcp.json = %s, want the header and URL to refer to ${HELIX_ORG_TOKEN} and ${HELIX_ORG_MCP_URL}", data)
	}
	// Claude Code calls only what is listed, and defers loading it itself.
	if !strings.Contains(string(data), `"`+domain.ToolSearchHeader+`": "off"`) {
		t.Errorf("mcp.json = %s, want tool search off for Claude Code", data)
	}
	if got := domain.MCPURL("http://127.0.0.1:8080/", "w-a"); got != "http://127.0.0.1:8080/workers/w-a/mcp" {
		t.Errorf("MCPURL = %q", got)
	}
	env := map[string]string{domain.TokenEnv: "hxa_abc", domain.MCPURLEnv: "http://127.0.0.1:8080/workers/w-a/mcp"}
	url, tok, err := domain.ReadMCPConfig(data, func(k string) string { return env[k] })
	if err != nil || url != "http://127.0.0.1:8080/workers/w-a/mcp" || tok != "hxa_abc" {
		t.Errorf("read back = %q %q %v", url, tok, err)
	}
	url, tok, _ = domain.ReadMCPConfig([]byte(`{"mcpServers":{"helix-org":{"url":"${BASE}/mcp","headers":{"Authorization":"Bearer hxo_lit${"}}}}`),
		func(k string) string { return map[string]string{"BASE": "http://h"}[k] })
	if url != "http://h/mcp" || tok != "hxo_lit${" {
		t.Errorf("expansion of other forms = %q %q", url, tok)
	}
}

func TestRelayURL(t *testing.T) {
	for _, tt := range []struct{ base, provider, want string }{
		{"http://127.0.0.1:8080", domain.RelayAnthropic, "http://127.0.0.1:8080/relay/anthropic"},
		{"http://10.0.0.1:9/", domain.RelayOpenAI, "http://10.0.0.1:9/relay/openai/v1"},
	} {
		if got := domain.RelayURL(tt.base, tt.provider); got != tt.want {
			t.Errorf("RelayURL(%q, %q) = %q, want %q", tt.base, tt.provider, got, tt.want)
		}
	}
}

// TestLimits pins the error a caller sees for every field over its limit.
func TestLimits(t *testing.T) {
	long := func(n int) string { return strings.Repeat("x", n+1) }
	msg := func(f func(*domain.Message)) error {
		m := domain.Message{Body: "b"}
		f(&m)
		return m.Validate(0)
	}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"from", msg(func(m *domain.Message) { m.From = long(domain.MaxAddress) }), "from: is 321 bytes; the limit is 320"},
		{"to count", msg(func(m *domain.Message) { m.To = make([]string, domain.MaxRecipients+1) }), "to: has 1001 entries; the limit is 1000"},
		{"to entry", msg(func(m *domain.Message) { m.To = []string{"a", long(domain.MaxAddress)} }), "to[1]: is 321 bytes; the limit is 320"},
		{"subject", msg(func(m *domain.Message) { m.Subject = long(domain.MaxSubject) }), "subject: is 2049 bytes; the limit is 2048"},
		{"threadId", msg(func(m *domain.Message) { m.ThreadID = long(domain.MaxMessageRef) }), "threadId: is 1025 bytes; the limit is 1024"},
		{"inReplyTo", msg(func(m *domain.Message) { m.InReplyTo = long(domain.MaxMessageRef) }), "inReplyTo: is 1025 bytes; the limit is 1024"},
		{"messageId", msg(func(m *domain.Message) { m.MessageID = long(domain.MaxMessageRef) }), "messageId: is 1025 bytes; the limit is 1024"},
		{"bodyContentType", msg(func(m *domain.Message) { m.BodyContentType = long(domain.MaxContentType) }), "bodyContentType: is 256 bytes; the limit is 255"},
		{"attachment count", msg(func(m *domain.Message) {
			m.Attachments = make([]domain.Attachment, domain.MaxAttachments+1)
		}), "attachments: has 101 entries; the limit is 100"},
		{"attachment name missing", msg(func(m *domain.Message) { m.Attachments = []domain.Attachment{{}} }), "attachments[0].name: is required"},
		{"attachment name", msg(func(m *domain.Message) { m.Attachments = []domain.Attachment{{Name: long(domain.MaxAttachmentName)}} }), "attachments[0].name: is 256 bytes; the limit is 255"},
		{"attachment content type", msg(func(m *domain.Message) {
			m.Attachments = []domain.Attachment{{Name: "a"}, {Name: "b", ContentType: long(domain.MaxContentType)}}
		}), "attachments[1].contentType: is 256 bytes; the limit is 255"},
		{"attachment ref", msg(func(m *domain.Message) {
			m.Attachments = []domain.Attachment{{Name: "a", Ref: long(domain.MaxAttachmentRef)}}
		}), "attachments[0].ref: is 129 bytes; the limit is 128"},
		{"extra", msg(func(m *domain.Message) { m.Extra = json.RawMessage(`"` + long(domain.MaxExtra) + `"`) }), "extra: is 1048579 bytes; the limit is 1048576"},
		{"worker name", domain.Worker{Kind: "ai", PositionID: "p-a", Name: long(domain.MaxName)}.Validate(), "name: is 257 bytes; the limit is 256"},
		{"role title", domain.Role{Title: long(domain.MaxName)}.Validate(), "title: is 257 bytes; the limit is 256"},
		{"position title", domain.Position{RoleID: "r-a", Title: long(domain.MaxName)}.Validate(), "title: is 257 bytes; the limit is 256"},
		{"stream name", domain.Stream{Name: long(domain.MaxName), Transport: domain.Transport{Kind: "local"}}.Validate(), "name: is 257 bytes; the limit is 256"},
		{"stream description", domain.Stream{Name: "s", Description: long(domain.MaxDescription), Transport: domain.Transport{Kind: "local"}}.Validate(), "description: is 4097 bytes; the limit is 4096"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !errors.Is(tt.err, domain.ErrInvalid) || tt.err.Error() != tt.want {
				t.Errorf("error = %v, want %q", tt.err, tt.want)
			}
		})
	}
	atLimit := domain.Message{Body: "b", From: strings.Repeat("f", domain.MaxAddress), Subject: strings.Repeat("s", domain.MaxSubject),
		To: make([]string, domain.MaxRecipients), Attachments: make([]domain.Attachment, domain.MaxAttachments)}
	for i := range atLimit.Attachments {
		atLimit.Attachments[i].Name = "a"
	}
	if err := atLimit.Validate(0); err != nil {
		t.Errorf("a message at every limit is refused: %v", err)
	}
}

// TestTransportRedacted: every secret field of a kind is hidden for
// display; nothing else is touched, and a kind without secrets not at all.
func TestTransportRedacted(t *testing.T) {
	got := string(testTransports.Redact(domain.Transport{Kind: "pager", Config: json.RawMessage(`{"pin":"s3cret","visible":"keep"}`)}).Config)
	if strings.Contains(got, "s3cret") || !strings.Contains(got, `"visible":"keep"`) || strings.Count(got, domain.Redacted) != 1 {
		t.Errorf("pager config redacted to %s", got)
	}
	if got := testTransports.Redact(domain.Transport{Kind: "pager", Config: json.RawMessage(`"1234"`)}).Config; strings.Contains(string(got), "1234") {
		t.Errorf("a config that is not an object shows as %s", got)
	}
	local := json.RawMessage(`{"a":"b"}`)
	if got := testTransports.Redact(domain.Transport{Kind: "local", Config: local}).Config; string(got) != string(local) {
		t.Errorf("a kind without secrets changed: %s", got)
	}
}
