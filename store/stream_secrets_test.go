package store_test

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

const hookSecret = "whsec_c2VjcmV0LWtleS1mb3ItdGVzdHMtMTIzNDU2Nzg="

// rawConfig reads a stream's stored transport config straight from the
// file with database/sql, as anyone holding a copy of the database could.
// (The "sqlite3" driver is the one the store's GORM driver registers.)
func rawConfig(t *testing.T, path, id string) string {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=10000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var cfg string
	if err := db.QueryRow(`SELECT transport_config FROM streams WHERE id = ?`, id).Scan(&cfg); err != nil {
		t.Fatalf("raw row of %s: %v", id, err)
	}
	return cfg
}

func openAt(t *testing.T, path string, keyFile string) *store.Store {
	t.Helper()
	st, err := store.Open(t.Context(), path, store.Options{Synchronous: "NORMAL", KeyFile: keyFile, Transports: testTransports})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// TestStreamSecretEncryptedAtRest: the webhook secret is nowhere in the
// database files, is redacted by every read but StreamWithSecrets, and is
// redacted in the audit trail.
func TestStreamSecretEncryptedAtRest(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "org.db")
	st := openAt(t, path, "")
	ctx := t.Context()
	if _, err := st.Bootstrap(ctx, nil); err != nil {
		t.Fatal(err)
	}
	created, err := st.CreateStream(ctx, "w-owner", domain.Stream{ID: "s-hook", Name: "hook", Transport: domain.Transport{
		Kind: kindWebhook, Config: json.RawMessage(`{"secret":"` + hookSecret + `","outbound_url":"https://example.com/in"}`)}})
	if err != nil {
		t.Fatal(err)
	}

	raw := rawConfig(t, path, "s-hook")
	if strings.Contains(raw, hookSecret) || !strings.Contains(raw, `"secret":"enc:v1:`) || !strings.Contains(raw, "https://example.com/in") {
		t.Errorf("stored config = %s, want the secret encrypted and the URL readable", raw)
	}
	for _, f := range []string{path, path + "-wal"} {
		if b, err := os.ReadFile(f); err == nil && bytes.Contains(b, []byte(hookSecret)) {
			t.Errorf("%s holds the secret in plain text", filepath.Base(f))
		}
	}

	got, err := st.GetStream(ctx, "s-hook")
	if err != nil {
		t.Fatal(err)
	}
	listed, err := st.ListStreams(ctx, kindWebhook)
	if err != nil || len(listed) != 1 {
		t.Fatalf("list: %v %v", listed, err)
	}
	want := `{"outbound_url":"https://example.com/in","secret":"` + domain.Redacted + `"}`
	for what, cfg := range map[string]json.RawMessage{"CreateStream": created.Transport.Config, "GetStream": got.Transport.Config, "ListStreams": listed[0].Transport.Config} {
		if string(cfg) != want {
			t.Errorf("%s config = %s, want %s", what, cfg, want)
		}
	}
	open, err := st.StreamWithSecrets(ctx, "s-hook")
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Secret      string `json:"secret"`
		OutboundURL string `json:"outbound_url"`
	}
	if err := json.Unmarshal(open.Transport.Config, &c); err != nil || c.Secret != hookSecret || c.OutboundURL != "https://example.com/in" {
		t.Errorf("StreamWithSecrets config = %s (%v), want the secret in the clear", open.Transport.Config, err)
	}

	evs, err := st.ReadEvents(ctx, store.EventQuery{StreamIDs: []string{domain.StreamOrg}})
	if err != nil || len(evs) == 0 {
		t.Fatalf("s-org: %v", err)
	}
	audit := string(evs[len(evs)-1].Message.Extra)
	if strings.Contains(audit, hookSecret) || strings.Contains(audit, "enc:v1:") || !strings.Contains(audit, domain.Redacted) {
		t.Errorf("create_stream audit = %s, want the secret redacted", audit)
	}
}

// TestPlaintextStreamSecretMigratedOnOpen: a row written before secrets
// were encrypted is encrypted the next time the database is opened, once.
func TestPlaintextStreamSecretMigratedOnOpen(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "org.db")
	st := openAt(t, path, "")
	st.Close()
	db, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	plain := `{"secret":"` + hookSecret + `","outbound_url":"https://example.com/in"}`
	if _, err := db.Exec(`INSERT INTO streams (id, name, description, transport_kind, transport_config, created_by, created_at)
		VALUES ('s-old', 'old', '', 'webhook', ?, 'w-owner', CURRENT_TIMESTAMP)`, plain); err != nil {
		t.Fatal(err)
	}
	db.Close()

	st = openAt(t, path, "")
	sealed := rawConfig(t, path, "s-old")
	if strings.Contains(sealed, hookSecret) || !strings.Contains(sealed, "enc:v1:") {
		t.Fatalf("after open the row holds %s, want the secret encrypted", sealed)
	}
	open, err := st.StreamWithSecrets(t.Context(), "s-old")
	if err != nil || !strings.Contains(string(open.Transport.Config), hookSecret) {
		t.Errorf("StreamWithSecrets after migration = %s, %v", open.Transport.Config, err)
	}
	st.Close()

	openAt(t, path, "")
	if again := rawConfig(t, path, "s-old"); again != sealed {
		t.Errorf("a second open re-encrypted the row: %s → %s", sealed, again)
	}

	// Without the right key file the secret cannot be read back, and says so.
	other := openAt(t, path, filepath.Join(dir, "other.key"))
	if _, err := other.StreamWithSecrets(t.Context(), "s-old"); err == nil || !strings.Contains(err.Error(), "wrong key file") {
		t.Errorf("StreamWithSecrets with another key file: %v, want a wrong-key error", err)
	}
}
