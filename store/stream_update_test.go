package store_test

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

const hookSecret2 = "whsec_YW5vdGhlci1rZXktZm9yLXRlc3RzLTEyMzQ1Njc4OTA="

// updateTransports are testTransports with a webhook whose Admit refuses
// a loopback outbound_url, as transports/webhook's does while private
// addresses are not allowed.
var updateTransports = domain.NewTransports(
	domain.TransportSpec{Kind: kindWebhook, Secrets: []string{"secret"}, Publish: true, Check: testTransports.All()[1].Check,
		Admit: func(raw json.RawMessage, _ int, _ func(domain.SettingSpec) string) error {
			if strings.Contains(string(raw), "127.0.0.1") {
				return domain.Invalid(domain.ConfigField("outbound_url"), "is a loopback address")
			}
			return nil
		}},
)

// hookConfig is a webhook stream's config as StreamWithSecrets opens it.
type hookConfig struct {
	Secret      string `json:"secret,omitempty"`
	OutboundURL string `json:"outbound_url,omitempty"`
}

// rawStream is a stream's row as stored, read past the store's cache.
func rawStream(t *testing.T, st *store.Store, id string) (name, desc, cfg string) {
	t.Helper()
	err := st.Write(t.Context(), func(tx *gorm.DB) error {
		return tx.Raw("SELECT name, description, transport_config FROM streams WHERE id = ?", id).Row().Scan(&name, &desc, &cfg)
	})
	if err != nil {
		t.Fatalf("raw row of %s: %v", id, err)
	}
	return name, desc, cfg
}

// TestUpdateStream: an update merges its keys into the stream's config,
// seals a secret given and keeps one not given, and is audited; a refused
// one leaves the row byte for byte and audits nothing.
func TestUpdateStream(t *testing.T) {
	t.Parallel()
	str := func(s string) *string { return &s }
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	tests := []struct {
		name     string
		id       string
		u        store.StreamUpdate
		wantName string
		wantDesc string
		want     hookConfig
		wantErr  string
		wantIs   error
	}{
		{name: "moves the outbound url, keeping the secret", u: store.StreamUpdate{Config: map[string]json.RawMessage{"outbound_url": raw(`"https://b.example/in"`)}},
			want: hookConfig{Secret: hookSecret, OutboundURL: "https://b.example/in"}},
		{name: "rotates the secret", u: store.StreamUpdate{Config: map[string]json.RawMessage{"secret": raw(`"` + hookSecret2 + `"`)}},
			want: hookConfig{Secret: hookSecret2, OutboundURL: "https://a.example/in"}},
		{name: "null removes a key", u: store.StreamUpdate{Config: map[string]json.RawMessage{"outbound_url": raw(`null`)}},
			want: hookConfig{Secret: hookSecret}},
		{name: "the mask a read shows keeps the secret", u: store.StreamUpdate{Kind: kindWebhook,
			Config: map[string]json.RawMessage{"secret": raw(`"` + domain.Redacted + `"`), "outbound_url": raw(`"https://b.example/in"`)}},
			want: hookConfig{Secret: hookSecret, OutboundURL: "https://b.example/in"}},
		{name: "name and description", u: store.StreamUpdate{Name: str("hooks"), Description: str("deploy notices")},
			wantName: "hooks", wantDesc: "deploy notices", want: hookConfig{Secret: hookSecret, OutboundURL: "https://a.example/in"}},
		{name: "another kind", u: store.StreamUpdate{Kind: kindEmail}, wantErr: `transport.kind: s-hook is a "webhook" stream and a stream's kind cannot change (valid: "webhook")`, wantIs: domain.ErrInvalid},
		{name: "an unknown key", u: store.StreamUpdate{Config: map[string]json.RawMessage{"outbound": raw(`"https://b.example/in"`)}},
			wantErr: `transport.config: json: unknown field "outbound"`, wantIs: domain.ErrInvalid},
		{name: "what Admit refuses", u: store.StreamUpdate{Config: map[string]json.RawMessage{"outbound_url": raw(`"http://127.0.0.1:9/in"`)}},
			wantErr: "transport.config.outbound_url: is a loopback address", wantIs: domain.ErrInvalid},
		{name: "no name", u: store.StreamUpdate{Name: str(" ")}, wantErr: "name: is required", wantIs: domain.ErrInvalid},
		{name: "a description over the limit", u: store.StreamUpdate{Description: str(strings.Repeat("x", domain.MaxDescription+1))},
			wantErr: "description: is 4097 bytes", wantIs: domain.ErrInvalid},
		{name: "an unknown stream", id: "s-nope", u: store.StreamUpdate{Name: str("x")}, wantErr: `stream "s-nope": not found`, wantIs: domain.ErrNotFound},
		{name: "the audit trail", id: domain.StreamOrg, u: store.StreamUpdate{Name: str("x")}, wantErr: "s-org is the org's audit trail", wantIs: domain.ErrInvalid},
		{name: "a DM", id: "s-dm-w-a-w-owner", u: store.StreamUpdate{Description: str("x")}, wantErr: "is a DM stream", wantIs: domain.ErrInvalid},
		{name: "a contact stream", id: "s-contact-w-owner", u: store.StreamUpdate{Config: map[string]json.RawMessage{"alias": raw(`"x"`)}},
			wantErr: "change it with set_contact", wantIs: domain.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := storetest.NewWith(t, store.Options{Transports: updateTransports})
			ctx := t.Context()
			if _, err := st.Bootstrap(ctx, []string{"create_stream"}); err != nil {
				t.Fatal(err)
			}
			if _, err := st.CreateStream(ctx, store.OwnerWorker, domain.Stream{ID: "s-hook", Name: "hook", Transport: domain.Transport{Kind: kindWebhook,
				Config: raw(`{"secret":"` + hookSecret + `","outbound_url":"https://a.example/in"}`)}}); err != nil {
				t.Fatal(err)
			}
			id := tt.id
			if id == "" {
				id = "s-hook"
			}
			name0, desc0, cfg0 := rawStream(t, st, "s-hook")
			seq0, _ := st.LastSeq(ctx)
			got, err := st.UpdateStream(ctx, store.OwnerWorker, id, tt.u)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, tt.wantIs) {
					t.Fatalf("UpdateStream = %v, want %v %q", err, tt.wantIs, tt.wantErr)
				}
				if name, desc, cfg := rawStream(t, st, "s-hook"); name != name0 || desc != desc0 || cfg != cfg0 {
					t.Errorf("a refused update changed the row: %q %q %s → %q %q %s", name0, desc0, cfg0, name, desc, cfg)
				}
				if seq, _ := st.LastSeq(ctx); seq != seq0 {
					t.Errorf("a refused update appended events: last seq %d → %d", seq0, seq)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			wantName := tt.wantName
			if wantName == "" {
				wantName = "hook"
			}
			if got.Name != wantName || got.Description != tt.wantDesc || strings.Contains(string(got.Transport.Config), "whsec_") {
				t.Errorf("UpdateStream = %+v (config %s), want name %q, description %q, the secret redacted", got, got.Transport.Config, wantName, tt.wantDesc)
			}
			open, err := st.StreamWithSecrets(ctx, "s-hook")
			if err != nil {
				t.Fatal(err)
			}
			var cfg hookConfig
			if err := json.Unmarshal(open.Transport.Config, &cfg); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, cfg); diff != "" {
				t.Errorf("config after the update (-want +got):\n%s", diff)
			}
			if _, _, stored := rawStream(t, st, "s-hook"); strings.Contains(stored, "whsec_") || !strings.Contains(stored, `"secret":"enc:v1:`) {
				t.Errorf("stored config = %s, want the secret sealed", stored)
			}
			evs, err := st.ReadEvents(ctx, store.EventQuery{StreamIDs: []string{domain.StreamOrg}})
			if err != nil || len(evs) == 0 {
				t.Fatalf("s-org: %v", err)
			}
			var c store.Change
			if err := json.Unmarshal(evs[len(evs)-1].Message.Extra, &c); err != nil || c.Action != "update_stream" || c.Actor != store.OwnerWorker || c.Target != "s-hook" {
				t.Errorf("last s-org change = %+v (%v), want w-owner's update_stream of s-hook", c, err)
			}
			if audit := string(evs[len(evs)-1].Message.Extra); strings.Contains(audit, "whsec_") || strings.Contains(audit, "enc:v1:") {
				t.Errorf("update_stream audit = %s, want its secrets redacted", audit)
			}
		})
	}
}

// TestUpdateStreamSameValues: an update that changes nothing writes and
// audits nothing.
func TestUpdateStreamSameValues(t *testing.T) {
	t.Parallel()
	st := storetest.NewWith(t, store.Options{Transports: updateTransports})
	ctx := t.Context()
	if _, err := st.Bootstrap(ctx, []string{"create_stream"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateStream(ctx, store.OwnerWorker, domain.Stream{ID: "s-hook", Name: "hook", Transport: domain.Transport{Kind: kindWebhook,
		Config: json.RawMessage(`{"outbound_url":"https://a.example/in"}`)}}); err != nil {
		t.Fatal(err)
	}
	seq0, _ := st.LastSeq(ctx)
	name := "hook"
	got, err := st.UpdateStream(ctx, store.OwnerWorker, "s-hook", store.StreamUpdate{Name: &name,
		Config: map[string]json.RawMessage{"outbound_url": json.RawMessage(`"https://a.example/in"`)}})
	if err != nil || got.Name != "hook" {
		t.Fatalf("UpdateStream = %+v, %v", got, err)
	}
	if seq, _ := st.LastSeq(ctx); seq != seq0 {
		t.Errorf("an update to the same values appended events: last seq %d → %d", seq0, seq)
	}
}

// TestUpdateStreamSeenByEveryServer: a server that had the stream cached
// reads the new outbound_url and secret on its very next read once
// another server (or the CLI) on the same database updates it — what its
// outbox signs the next delivery with.
func TestUpdateStreamSeenByEveryServer(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, key := storetest.DB(t), filepath.Join(t.TempDir(), "helix-org.key")
	open := func() *store.Store {
		st, err := store.Open(ctx, db, store.Options{Synchronous: "NORMAL", KeyFile: key, Transports: updateTransports})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	server, other := open(), open()
	if _, err := server.Bootstrap(ctx, []string{"create_stream"}); err != nil {
		t.Fatal(err)
	}
	if _, err := server.CreateStream(ctx, store.OwnerWorker, domain.Stream{ID: "s-hook", Name: "hook", Transport: domain.Transport{Kind: kindWebhook,
		Config: json.RawMessage(`{"secret":"` + hookSecret + `","outbound_url":"https://a.example/in"}`)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := server.StreamWithSecrets(ctx, "s-hook"); err != nil { // cached
		t.Fatal(err)
	}
	if _, err := other.UpdateStream(ctx, store.OwnerWorker, "s-hook", store.StreamUpdate{Config: map[string]json.RawMessage{
		"secret": json.RawMessage(`"` + hookSecret2 + `"`), "outbound_url": json.RawMessage(`"https://b.example/in"`)}}); err != nil {
		t.Fatal(err)
	}
	got, err := server.StreamWithSecrets(ctx, "s-hook")
	if err != nil {
		t.Fatal(err)
	}
	var cfg hookConfig
	if err := json.Unmarshal(got.Transport.Config, &cfg); err != nil || cfg != (hookConfig{Secret: hookSecret2, OutboundURL: "https://b.example/in"}) {
		t.Errorf("the other server reads %s (%v), want the new secret and url", got.Transport.Config, err)
	}
}
