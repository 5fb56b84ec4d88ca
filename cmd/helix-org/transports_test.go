package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/transports/email"
	"github.com/helixml/helix-org/transports/email/postmarktest"
	"github.com/helixml/helix-org/transports/github"
	"github.com/helixml/helix-org/transports/gitlab"
	"github.com/helixml/helix-org/transports/slack"
	"github.com/helixml/helix-org/transports/slack/slacktest"
	"github.com/helixml/helix-org/transports/telegram"
	"github.com/helixml/helix-org/transports/telegram/telegramtest"
	"github.com/helixml/helix-org/transports/webhook"
)

// transportServer is this binary's server with every transport's routes over
// a store that knows this binary's transports.
func transportServer(t *testing.T) (*store.Store, string) {
	t.Helper()
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "helix-org.db"), store.Options{Synchronous: "NORMAL", Transports: transports.Specs()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := st.Bootstrap(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(server.New(st, server.Config{Routes: transportRoutes(transportDeps(st, slog.New(slog.DiscardHandler)), nil)}))
	t.Cleanup(hs.Close)
	return st, hs.URL
}

func postTo(t *testing.T, url string, h http.Header, body []byte) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header = h
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// refused checks a refusal names field and does not quote the secret.
func refused(t *testing.T, err error, field, secret string) {
	t.Helper()
	if !errors.Is(err, domain.ErrInvalid) || !strings.Contains(err.Error(), field) || secret != "" && strings.Contains(err.Error(), secret) {
		t.Errorf("refusal = %v; want an invalid-input error naming %s without the secret", err, field)
	}
}

// TestSecretsAcceptedAtCreationVerifyInbound: for each transport with a
// secret, edge cases of its charset — what create_stream (a webhook
// stream's secret) or `config set` (Slack's signing secret, Telegram's
// secret token, GitHub's webhook secret, Postmark's inbound basic-auth
// user and password) accepts is what its inbound route then verifies, through
// this binary's own wiring; what they refuse is refused naming the field.
func TestSecretsAcceptedAtCreationVerifyInbound(t *testing.T) {
	t.Parallel()
	key := []byte("0123456789abcdef!")
	t.Run("webhook", func(t *testing.T) {
		for i, secret := range []string{
			"whsec_" + base64.StdEncoding.EncodeToString(key),                                  // padded
			"whsec_" + base64.RawStdEncoding.EncodeToString(key),                               // unpadded
			"whsec_" + base64.StdEncoding.EncodeToString(key[:16]),                             // the shortest key
			"whsec_" + base64.StdEncoding.EncodeToString(key[:15]),                             // one byte short
			"whsec_" + base64.URLEncoding.EncodeToString([]byte("\xfb\xff\xfe0123456789abcd")), // the URL-safe alphabet
			"whsec_", "whsec_whsec_" + base64.StdEncoding.EncodeToString(key), "WHSEC_" + base64.StdEncoding.EncodeToString(key),
			"whsec_ " + base64.StdEncoding.EncodeToString(key),
		} {
			st, base := transportServer(t)
			id := "s-hook-" + string(rune('a'+i))
			_, err := st.CreateStream(t.Context(), store.OwnerWorker, domain.Stream{ID: id, Name: id,
				Transport: domain.Transport{Kind: webhook.Kind, Config: json.RawMessage(`{"secret":` + quote(secret) + `}`)}})
			if err != nil {
				refused(t, err, "transport.config.secret", "")
				continue
			}
			// The sender decodes the key as a Standard Webhooks client does.
			raw := strings.TrimPrefix(secret, "whsec_")
			k, derr := base64.StdEncoding.DecodeString(raw)
			if derr != nil {
				k, derr = base64.RawStdEncoding.DecodeString(raw)
			}
			if derr != nil {
				t.Errorf("%q was accepted but is not base64 a client can decode", secret)
				continue
			}
			now := time.Now()
			body := []byte("hello")
			h := http.Header{"Content-Type": {"text/plain"}, "Webhook-Id": {"msg_1"}, "Webhook-Timestamp": {itoa(now.Unix())},
				"Webhook-Signature": {webhook.Sign(k, "msg_1", now.Unix(), body)}}
			if code, answer := postTo(t, base+"/webhooks/"+id, h, body); code != 200 {
				t.Errorf("secret %q accepted at creation, but a signed POST got %d %s", secret, code, answer)
			}
		}
	})
	t.Run("slack", func(t *testing.T) {
		for _, secret := range []string{"8f742231b10e8888abcd99ef00ff85a5", "0123456789abcdef", strings.Repeat("0f", 64),
			"8F742231B10E8888ABCD99EF00FF85A5", "8f742231b10e8888abcd99ef00ff85a5\n", "xoxb-not-a-secret", ""} {
			st, base := transportServer(t)
			value, _ := json.Marshal(map[string]string{"signing_secret": secret})
			if err := slack.ConfigSetting.Check(string(value)); err != nil {
				refused(t, err, "signing_secret", strings.TrimSpace(secret))
				continue
			}
			must(t, st.SetSetting(t.Context(), slack.ConfigSetting, string(value)))
			_, err := st.CreateStream(t.Context(), store.OwnerWorker, domain.Stream{ID: "s-general", Name: "general",
				Transport: domain.Transport{Kind: slack.Kind, Config: json.RawMessage(`{"channel":"C0GENERAL"}`)}})
			must(t, err)
			body := slacktest.Message{EventID: "Ev1", Channel: "C0GENERAL", User: "U0ADA", Text: "hi", TS: "1.1"}.JSON()
			code, answer := postTo(t, base+"/slack/events", slacktest.Headers(secret, time.Now(), body), body)
			if secret == "" {
				if code != 401 {
					t.Errorf("no signing secret: %d %s, want 401", code, answer)
				}
			} else if code != 200 {
				t.Errorf("signing secret %q accepted by config set, but a signed event got %d %s", secret, code, answer)
			}
		}
	})
	t.Run("telegram", func(t *testing.T) {
		for _, secret := range []string{"a", "Abc_123-xyz", strings.Repeat("Z", 256), strings.Repeat("Z", 257), "with space", "colon:ok?", "pädding"} {
			st, base := transportServer(t)
			value, _ := json.Marshal(map[string]string{"secret_token": secret})
			if err := telegram.ConfigSetting.Check(string(value)); err != nil {
				refused(t, err, "secret_token", secret)
				continue
			}
			must(t, st.SetSetting(t.Context(), telegram.ConfigSetting, string(value)))
			_, err := st.CreateStream(t.Context(), store.OwnerWorker, domain.Stream{ID: "s-team", Name: "team",
				Transport: domain.Transport{Kind: telegram.Kind, Config: json.RawMessage(`{"chat_id":"-100123"}`)}})
			must(t, err)
			body := telegramtest.Message{UpdateID: 1, MessageID: 1, ChatID: -100123, From: "ada", Text: "hi"}.JSON()
			if code, answer := postTo(t, base+"/telegram/webhook", telegramtest.Headers(secret), body); code != 200 {
				t.Errorf("secret token %q accepted by config set, but an update got %d %s", secret, code, answer)
			}
		}
	})
	t.Run("github", func(t *testing.T) {
		issue, err := os.ReadFile(filepath.Join("..", "..", "transports", "github", "testdata", "issues.json"))
		must(t, err)
		for _, secret := range []string{"s", "with space", "pädding", "trailing\n", strings.Repeat("x", 4096), `quote"and\\back`, ""} {
			st, base := transportServer(t)
			value, _ := json.Marshal(map[string]string{"webhook_secret": secret})
			if err := github.ConfigSetting.Check(string(value)); err != nil {
				refused(t, err, "webhook_secret", secret)
				continue
			}
			must(t, st.SetSetting(t.Context(), github.ConfigSetting, string(value)))
			_, err := st.CreateStream(t.Context(), store.OwnerWorker, domain.Stream{ID: "s-docs", Name: "docs",
				Transport: domain.Transport{Kind: github.Kind, Config: json.RawMessage(`{"repo":"helixml/docs","events":["issues"]}`)}})
			must(t, err)
			h := http.Header{"Content-Type": {"application/json"}, "X-Github-Event": {"issues"}, "X-Github-Delivery": {"d-1"},
				github.SignatureHeader: {github.Sign(secret, issue)}}
			code, answer := postTo(t, base+"/github/webhook", h, issue)
			if secret == "" {
				if code != 401 {
					t.Errorf("no webhook secret: %d %s, want 401", code, answer)
				}
			} else if code != 200 {
				t.Errorf("webhook secret %q accepted by config set, but a signed delivery got %d %s", secret, code, answer)
			}
		}
	})
	t.Run("gitlab", func(t *testing.T) {
		note, err := os.ReadFile(filepath.Join("..", "..", "transports", "gitlab", "testdata", "note_issue.json"))
		must(t, err)
		for _, secret := range []string{"0123456789abcdef", strings.Repeat("~", 256), `quote"and\\back!#$%`, strings.Repeat("x", 257),
			"short", "with space 0123456789", "pädding-0123456789", "trailing-0123456789\n", ""} {
			st, base := transportServer(t)
			_, err := st.CreateStream(t.Context(), store.OwnerWorker, domain.Stream{ID: "s-test", Name: "test",
				Transport: domain.Transport{Kind: gitlab.Kind, Config: json.RawMessage(`{"project":"gitlab-org/gitlab-test","events":["note"],"secret":` + quote(secret) + `}`)}})
			if err != nil {
				refused(t, err, "transport.config.secret", secret)
				continue
			}
			h := http.Header{"Content-Type": {"application/json"}, "X-Gitlab-Event": {"Note Hook"}, "X-Gitlab-Token": {secret}}
			if code, answer := postTo(t, base+"/gitlab/webhook", h, note); code != 200 {
				t.Errorf("secret %q accepted at creation, but a webhook carrying it got %d %s", secret, code, answer)
			}
		}
	})
	t.Run("email", func(t *testing.T) {
		for _, c := range []struct{ user, password string }{
			{"postmark", "p"}, {"post mark", "pass:with:colons"}, {"pöstmark", "pässword"}, {"user", strings.Repeat("p", 1024)},
			{"colon:user", "pw"}, {"user", ""}, {"", "pw"},
		} {
			st, base := transportServer(t)
			value, _ := json.Marshal(map[string]string{"inbound_user": c.user, "inbound_password": c.password, "inbound_address": "h@inbound.postmarkapp.com"})
			if err := email.ConfigSetting.Check(string(value)); err != nil {
				refused(t, err, "inbound_user", c.password)
				continue
			}
			must(t, st.SetSetting(t.Context(), email.ConfigSetting, string(value)))
			_, err := st.CreateStream(t.Context(), store.OwnerWorker, domain.Stream{ID: "s-mail", Name: "mail",
				Transport: domain.Transport{Kind: email.Kind, Config: json.RawMessage(`{"alias":"sam"}`)}})
			must(t, err)
			body := postmarktest.Inbound{InboundHash: "h", Alias: "sam", From: "ada@example.com", Subject: "hi", Text: "hi", PostmarkID: "pm-1", MessageID: "<1@x>"}.JSON()
			req, _ := http.NewRequest(http.MethodPost, base+"/email/postmark", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.SetBasicAuth(c.user, c.password)
			resp, err := http.DefaultClient.Do(req)
			must(t, err)
			answer, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if c.user == "" || c.password == "" {
				if resp.StatusCode != 401 {
					t.Errorf("no inbound credentials: %d %s, want 401", resp.StatusCode, answer)
				}
			} else if resp.StatusCode != 200 {
				t.Errorf("inbound credentials %q accepted by config set, but Postmark's POST got %d %s", c.user, resp.StatusCode, answer)
			}
		}
	})
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
