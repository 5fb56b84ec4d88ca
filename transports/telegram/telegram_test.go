package telegram_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/outbox"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
	"github.com/helixml/helix-org/transports/delivery"
	"github.com/helixml/helix-org/transports/inbound"
	"github.com/helixml/helix-org/transports/telegram"
	"github.com/helixml/helix-org/transports/telegram/telegramtest"
	"github.com/helixml/helix-org/transports/transport"
)

const (
	secret   = "s3cret-Token_for-the-webhook"
	botToken = "123456789:AAE-abcdefghijklmnopqrstuvwxyz_0123"
	chat     = -1001234567890
)

// fixture: telegram streams s-team (the chat, followed by AI worker
// w-bot) and s-topic (topic 7 of it), the endpoint over HTTP and a fake
// Bot API.
type fixture struct {
	st  *store.Store
	url string
	tg  *telegramtest.Server
}

func newFixture(t *testing.T, settings string) fixture {
	t.Helper()
	st := storetest.NewWith(t, store.Options{Transports: transport.List{telegram.Transport}.Specs()})
	ctx := t.Context()
	fake := telegramtest.New(t, botToken)
	if settings == "" {
		settings = `{"bot_token":"` + botToken + `","secret_token":"` + secret + `","api_url":"` + fake.URL + `"}`
	}
	must(t, st.SetSetting(ctx, telegram.ConfigSetting, settings))
	_, err := st.Bootstrap(ctx, []string{"publish"})
	must(t, err)
	_, err = st.CreateRole(ctx, store.OwnerWorker, domain.Role{ID: "r-bot", Title: "Bot", Content: "Answer in Telegram."})
	must(t, err)
	_, err = st.CreatePosition(ctx, store.OwnerWorker, domain.Position{ID: "p-bot", RoleID: "r-bot", Title: "Bot"})
	must(t, err)
	_, err = st.HireWorker(ctx, store.OwnerWorker, domain.Worker{ID: "w-bot", Kind: domain.WorkerAI, PositionID: "p-bot", Name: "Bot"}, nil)
	must(t, err)
	for id, cfg := range map[string]string{"s-team": `{"chat_id":"-1001234567890"}`, "s-topic": `{"chat_id":"-1001234567890","message_thread_id":7}`} {
		_, err := st.CreateStream(ctx, store.OwnerWorker, domain.Stream{ID: id, Name: id, Transport: domain.Transport{Kind: telegram.Kind, Config: json.RawMessage(cfg)}})
		must(t, err)
	}
	_, err = st.Subscribe(ctx, store.OwnerWorker, "s-team", "w-bot")
	must(t, err)
	srv := httptest.NewServer(inbound.Mux(st, nil, nil, telegram.Endpoint(st)))
	t.Cleanup(srv.Close)
	return fixture{st: st, url: srv.URL + "/telegram/webhook", tg: fake}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("setup: %v", err)
	}
}

func (f fixture) post(t *testing.T, h http.Header, body []byte) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, f.url, bytes.NewReader(body))
	req.Header = h
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func (f fixture) events(t *testing.T, stream string) []domain.Event {
	t.Helper()
	evs, err := f.st.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{stream}})
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

var hello = telegramtest.Message{UpdateID: 9001, MessageID: 41, ChatID: chat, From: "ada", Text: "is the deploy done?"}

// TestUpdates: what the webhook answers, and what is stored.
func TestUpdates(t *testing.T) {
	inTopic := telegramtest.Message{UpdateID: 9002, MessageID: 42, ChatID: chat, Topic: 7, From: "bob", Text: "topic question"}
	tests := []struct {
		name       string
		header     http.Header
		body       []byte
		wantStatus int
		wantIn     string
		wantNew    map[string]int
	}{
		{"a chat message", telegramtest.Headers(secret), hello.JSON(), 200, `"stream":"s-team"`, map[string]int{"s-team": 1}},
		{"a topic message reaches the chat's stream and the topic's", telegramtest.Headers(secret), inTopic.JSON(), 200, `"stream":"s-topic"`, map[string]int{"s-team": 1, "s-topic": 1}},
		{"no secret token", telegramtest.Headers(""), hello.JSON(), 401, "missing X-Telegram-Bot-Api-Secret-Token", nil},
		{"wrong secret token", telegramtest.Headers(secret + "x"), hello.JSON(), 401, "wrong X-Telegram-Bot-Api-Secret-Token", nil},
		{"a bot's message", telegramtest.Headers(secret), telegramtest.Message{UpdateID: 9003, MessageID: 43, ChatID: chat, From: "other_bot", IsBot: true, Text: "beep"}.JSON(), 202, "a bot's message", nil},
		{"a chat no stream follows", telegramtest.Headers(secret), telegramtest.Message{UpdateID: 9004, MessageID: 1, ChatID: 77, From: "eve", Text: "hi"}.JSON(), 202, "no telegram stream follows chat 77", nil},
		{"an edit is not a new message", telegramtest.Headers(secret), []byte(`{"update_id":9005,"edited_message":{"message_id":41,"chat":{"id":-1001234567890},"text":"x"}}`), 202, "only new messages", nil},
		{"not an Update", telegramtest.Headers(secret), []byte(`[1]`), 400, "not a Telegram Update", nil},
		{"JSON nested 1,000 deep", telegramtest.Headers(secret), []byte(`{"a":` + strings.Repeat("[", 999) + strings.Repeat("]", 999) + "}"), 400, "body: is JSON nested more than 100 levels deep; the limit is 100", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, "")
			code, answer := f.post(t, tt.header, tt.body)
			if code != tt.wantStatus || !strings.Contains(answer, tt.wantIn) {
				t.Fatalf("answered %d %s, want %d containing %q", code, answer, tt.wantStatus, tt.wantIn)
			}
			for _, s := range []string{"s-team", "s-topic"} {
				if got := len(f.events(t, s)); got != tt.wantNew[s] {
					t.Errorf("%s holds %d events, want %d", s, got, tt.wantNew[s])
				}
			}
		})
	}
}

// TestRedeliveryStoredOnce: Telegram redelivers an update it got no 2xx
// for; update_id stores it once.
func TestRedeliveryStoredOnce(t *testing.T) {
	f := newFixture(t, "")
	for i := range 3 {
		code, answer := f.post(t, telegramtest.Headers(secret), hello.JSON())
		if code != 200 || strings.Contains(answer, `"duplicate":true`) != (i > 0) {
			t.Fatalf("delivery %d: %d %s", i, code, answer)
		}
	}
	evs := f.events(t, "s-team")
	if len(evs) != 1 {
		t.Fatalf("stored %d events, want 1", len(evs))
	}
	m := evs[0].Message
	if m.From != "ada" || m.Body != "is the deploy done?" || m.MessageID != "41" || m.ThreadID != "41" {
		t.Errorf("stored %+v", m)
	}
}

// TestNoSecretToken: until the operator sets one, every update is refused.
func TestNoSecretToken(t *testing.T) {
	f := newFixture(t, `{"bot_token":"`+botToken+`"}`)
	if code, answer := f.post(t, telegramtest.Headers(secret), hello.JSON()); code != 401 || !strings.Contains(answer, "no secret_token") {
		t.Errorf("%d %s, want 401 naming secret_token", code, answer)
	}
}

// TestSecretsAcceptedAtConfigWork: a secret token `config set` accepts is
// one the endpoint takes; one it refuses (Telegram's own charset) is
// refused naming the field, never quoting it.
func TestSecretsAcceptedAtConfigWork(t *testing.T) {
	for _, tt := range []struct {
		name, secret string
		ok           bool
	}{
		{"letters digits _ -", "Abc_123-xyz", true},
		{"one character", "a", true},
		{"256 characters", strings.Repeat("z", 256), true},
		{"257 characters", strings.Repeat("z", 257), false},
		{"a space", "abc def", false},
		{"a colon", "abc:def", false},
		{"base64 padding", "c2VjcmV0==", false},
		{"unicode", "sécret", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			value, _ := json.Marshal(map[string]string{"bot_token": botToken, "secret_token": tt.secret})
			err := telegram.ConfigSetting.Check(string(value))
			if !tt.ok {
				if !errors.Is(err, domain.ErrInvalid) || !strings.Contains(err.Error(), "secret_token") || strings.Contains(err.Error(), tt.secret) {
					t.Fatalf("Check = %v, want a refusal naming secret_token without the value", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			f := newFixture(t, string(value))
			if code, answer := f.post(t, telegramtest.Headers(tt.secret), hello.JSON()); code != 200 {
				t.Errorf("a secret accepted at config is not taken: %d %s", code, answer)
			}
		})
	}
}

// TestRepliesThreaded: what a worker publishes goes out with sendMessage
// as a reply to the message it answers, in that message's topic.
func TestRepliesThreaded(t *testing.T) {
	f := newFixture(t, "")
	inTopic := telegramtest.Message{UpdateID: 9010, MessageID: 55, ChatID: chat, Topic: 7, From: "bob", Text: "in the topic"}
	f.post(t, telegramtest.Headers(secret), hello.JSON())
	f.post(t, telegramtest.Headers(secret), inTopic.JSON())
	team := f.events(t, "s-team")
	engine := outbox.New(f.st, []delivery.Sender{telegram.NewSender(f.st, nil)}, outbox.Options{})
	tests := []struct {
		name   string
		stream string
		msg    domain.Message
		want   telegramtest.Sent
	}{
		{"inReplyTo an event: a reply to its message", "s-team", domain.Message{Body: "yes, done", InReplyTo: team[0].ID},
			telegramtest.Sent{ChatID: chat, Text: "yes, done", ReplyToMessageID: 41}},
		{"inReplyTo a topic message: in the topic", "s-team", domain.Message{Body: "answered", InReplyTo: team[1].ID},
			telegramtest.Sent{ChatID: chat, Text: "answered", ReplyToMessageID: 55, MessageThreadID: 7}},
		{"a topic's stream posts in its topic", "s-topic", domain.Message{Body: "news"},
			telegramtest.Sent{ChatID: chat, Text: "news", MessageThreadID: 7}},
		{"nothing to answer: a new message", "s-team", domain.Message{Body: "good morning"},
			telegramtest.Sent{ChatID: chat, Text: "good morning"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.msg.From = "w-bot"
			ev, err := f.st.Append(t.Context(), domain.Event{StreamID: tt.stream, Source: "w-bot", Message: tt.msg}, store.AppendOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if err := engine.Step(t.Context()); err != nil {
				t.Fatal(err)
			}
			got := f.tg.Next(t)
			// The remote's id of the message is recorded on its delivery.
			if ds, err := f.st.ListDeliveries(t.Context(), store.DeliveryQuery{EventID: ev.ID}); err != nil || len(ds) != 1 || ds[0].RemoteID == "" || ds[0].RemoteID != strconv.FormatInt(got.MessageID, 10) {
				t.Errorf("delivery of %s: %+v, %v; want it delivered as %v", ev.ID, ds, err, got.MessageID)
			}
			if tt.want.MessageID = got.MessageID; got != tt.want {
				t.Errorf("sendMessage got %+v, want %+v", got, tt.want)
			}
		})
	}
	t.Run("refusals never show the token", func(t *testing.T) {
		s := telegram.NewSender(f.st, nil)
		st, _ := f.st.StreamWithSecrets(t.Context(), "s-team")
		ev := domain.Event{ID: "e-x", StreamID: "s-team", Message: domain.Message{Body: "hi"}}
		f.tg.Script(telegramtest.Reply{Status: 400, Description: "Bad Request: chat not found"}, telegramtest.Reply{Status: 429, Description: "Too Many Requests: retry after 9", RetryAfter: 9})
		if out := s.Send(t.Context(), st, ev, 1); !out.Permanent || !strings.Contains(out.Err.Error(), "chat not found") {
			t.Errorf("400: %+v, want a permanent failure", out)
		}
		if out := s.Send(t.Context(), st, ev, 2); out.Permanent || out.RetryAfter != 9*time.Second {
			t.Errorf("429: %+v, want a retry after 9s", out)
		}
		must(t, f.st.SetSetting(t.Context(), telegram.ConfigSetting, `{"bot_token":"`+botToken+`","secret_token":"x","api_url":"http://127.0.0.1:1"}`))
		out := s.Send(t.Context(), st, ev, 3)
		if out.Err == nil || strings.Contains(out.Err.Error(), botToken) || out.Permanent {
			t.Errorf("unreachable API: %v, want a retried error without the token", out.Err)
		}
	})
}

// TestContact: the address set_contact takes for Telegram is a chat_id,
// and the contact stream it makes is a valid telegram stream.
func TestContact(t *testing.T) {
	for _, tt := range []struct{ name, address, want string }{
		{"a private chat", "90017", `{"chat_id":"90017"}`},
		{"a group", "-1001234567890", `{"chat_id":"-1001234567890"}`},
		{"a username", "@lee", `address: "@lee" must be the chat_id of the human's chat with the bot`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := telegram.Transport.Contact.Stream("w-lee", tt.address)
			if err != nil {
				if !errors.Is(err, domain.ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("err = %v, want ErrInvalid containing %q", err, tt.want)
				}
				return
			}
			if string(cfg) != tt.want || telegram.Transport.Check(cfg) != nil || telegram.Transport.Contact.Mail {
				t.Errorf("contact stream %s (check: %v), want %s, shown as chat", cfg, telegram.Transport.Check(cfg), tt.want)
			}
		})
	}
}

// TestContactSender: Lee's contact is a Telegram chat and the owner's DM
// to Lee went there. What comes back is Lee's answer on the DM only when
// Telegram says its sender is the user whose id the contact's chat_id
// is — Lee's private chat with the bot; in a group, or from anyone else,
// it lands as an unverified message from that user.
func TestContactSender(t *testing.T) {
	for _, tt := range []struct {
		name, address string
		msg           telegramtest.Message
		wantLee       bool
	}{
		{"Lee in the private chat with the bot", "90017", telegramtest.Message{ChatID: 90017, From: "lee"}, true},
		{"Lee in a group: anyone there could have written", "-100555", telegramtest.Message{ChatID: -100555, FromID: 90017, From: "lee"}, false},
		{"another user than the chat's", "90017", telegramtest.Message{ChatID: 90017, FromID: 4242, From: "lee"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, "")
			ctx := t.Context()
			_, err := f.st.CreatePosition(ctx, store.OwnerWorker, domain.Position{ID: "p-lee", RoleID: "r-bot", Title: "Lead"})
			must(t, err)
			_, err = f.st.HireWorker(ctx, store.OwnerWorker, domain.Worker{ID: "w-lee", Kind: domain.WorkerHuman, PositionID: "p-lee", Name: "Lee"}, nil)
			must(t, err)
			_, err = f.st.SetContact(ctx, store.OwnerWorker, "w-lee", store.Contact{Kind: string(telegram.Kind), Address: tt.address})
			must(t, err)
			dm, err := f.st.EnsureDM(ctx, store.OwnerWorker, "w-lee")
			must(t, err)
			_, err = f.st.Append(ctx, domain.Event{StreamID: dm.ID, Source: store.OwnerWorker, Message: domain.Message{Body: "May I refund order 7?"}}, store.AppendOptions{})
			must(t, err)

			tt.msg.UpdateID, tt.msg.MessageID, tt.msg.Text = 9100, 80, "Yes, refund it."
			if code, answer := f.post(t, telegramtest.Headers(secret), tt.msg.JSON()); code != 200 {
				t.Fatalf("the answer: %d %s", code, answer)
			}
			evs := f.events(t, dm.ID)
			got := evs[len(evs)-1]
			var extra map[string]string
			json.Unmarshal(got.Message.Extra, &extra)
			switch {
			case tt.wantLee && (got.Source != "w-lee" || got.Message.Body != "Yes, refund it." || extra["verifiedBy"] != "telegram-user"):
				t.Errorf("on the DM: %q %q %v; want Lee's answer, verified by telegram-user", got.Source, got.Message.Body, extra)
			case !tt.wantLee && (got.Source != "" || got.Message.From != "lee" || extra["unverifiedSender"] != "lee" ||
				!strings.HasPrefix(got.Message.Body, "Unverified sender lee, not shown to be w-lee:")):
				t.Errorf("on the DM: %q from %q: %q %v; want an unverified message from lee", got.Source, got.Message.From, got.Message.Body, extra)
			}
		})
	}
}
