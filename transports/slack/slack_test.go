//go:build !fuzzonly

// Left out of make fuzz's binaries (-tags fuzzonly): this file reaches the
// store, whose tree would be compiled again with fuzz instrumentation.

package slack_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/outbox"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
	"github.com/helixml/helix-org/transports/delivery"
	"github.com/helixml/helix-org/transports/inbound"
	"github.com/helixml/helix-org/transports/slack"
	"github.com/helixml/helix-org/transports/slack/slacktest"
	"github.com/helixml/helix-org/transports/transport"
)

const (
	signingSecret = "8f742231b10e8888abcd99yyyzzz85a5"
	goodSecret    = "8f742231b10e8888abcd99ef00ff85a5"
	botToken      = "xoxb-1234-5678-abcdefghijkl"
)

// fixture: slack streams s-general (channel C0GENERAL, followed by AI
// worker w-bot), s-thread (C0GENERAL, one thread) and the endpoint over
// HTTP, with a fake Slack for replies.
type fixture struct {
	st    *store.Store
	url   string
	slack *slacktest.Server
	now   time.Time
}

func newFixture(t testing.TB, settings string) fixture {
	t.Helper()
	st := storetest.NewWith(t, store.Options{Transports: transport.List{slack.Transport}.Specs()})
	ctx := t.Context()
	fake := slacktest.New(t, botToken)
	if settings == "" {
		settings = `{"signing_secret":"` + goodSecret + `","bot_token":"` + botToken + `","api_url":"` + fake.URL + `"}`
	}
	must(t, st.SetSetting(ctx, slack.ConfigSetting, settings))
	_, err := st.Bootstrap(ctx, []string{"publish"})
	must(t, err)
	_, err = st.CreateRole(ctx, store.OwnerWorker, domain.Role{ID: "r-bot", Title: "Bot", Content: "Answer in Slack."})
	must(t, err)
	_, err = st.CreatePosition(ctx, store.OwnerWorker, domain.Position{ID: "p-bot", RoleID: "r-bot", Title: "Bot"})
	must(t, err)
	_, err = st.HireWorker(ctx, store.OwnerWorker, domain.Worker{ID: "w-bot", Kind: domain.WorkerAI, PositionID: "p-bot", Name: "Bot"}, nil)
	must(t, err)
	for id, cfg := range map[string]string{"s-general": `{"channel":"C0GENERAL"}`, "s-thread": `{"channel":"C0GENERAL","thread_ts":"1712340000.000100"}`} {
		_, err := st.CreateStream(ctx, store.OwnerWorker, domain.Stream{ID: id, Name: id, Transport: domain.Transport{Kind: slack.Kind, Config: json.RawMessage(cfg)}})
		must(t, err)
	}
	_, err = st.Subscribe(ctx, store.OwnerWorker, "s-general", "w-bot")
	must(t, err)
	now := time.Now()
	srv := httptest.NewServer(inbound.Mux(st, nil, nil, slack.Endpoint(st, func() time.Time { return now })))
	t.Cleanup(srv.Close)
	return fixture{st: st, url: srv.URL + "/slack/events", slack: fake, now: now}
}

func must(t testing.TB, err error) {
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

var top = slacktest.Message{EventID: "Ev01", Channel: "C0GENERAL", User: "U0ALICE", Text: "can someone look at the build?", TS: "1712345678.000200"}

// TestEvents: what the Events API gets back, and what is stored.
func TestEvents(t *testing.T) {
	inThread := slacktest.Message{EventID: "Ev02", Channel: "C0GENERAL", User: "U0BOB", Text: "on it", TS: "1712340001.000300", ThreadTS: "1712340000.000100"}
	signed := func(m []byte) http.Header { return slacktest.Headers(goodSecret, time.Now(), m) }
	tests := []struct {
		name       string
		header     func(body []byte) http.Header
		body       []byte
		wantStatus int
		wantIn     string
		wantNew    map[string]int // events per stream
	}{
		{"url_verification answered with its challenge", signed, slacktest.URLVerification("3eZbrw1aBm2rZgRN"), 200, `{"challenge":"3eZbrw1aBm2rZgRN"}`, nil},
		{"url_verification unsigned", func([]byte) http.Header { return http.Header{} }, slacktest.URLVerification("c"), 401, "missing X-Slack-Signature", nil},
		{"a channel message", signed, top.JSON(), 200, `"stream":"s-general"`, map[string]int{"s-general": 1}},
		{"a thread reply reaches the channel's stream and the thread's", signed, inThread.JSON(), 200, `"stream":"s-thread"`, map[string]int{"s-general": 1, "s-thread": 1}},
		{"wrong signing secret", func(b []byte) http.Header { return slacktest.Headers(signingSecret, time.Now(), b) }, top.JSON(), 401, "does not match the body", nil},
		{"signature over another body", func([]byte) http.Header { return slacktest.Headers(goodSecret, time.Now(), []byte("{}")) }, top.JSON(), 401, "does not match", nil},
		{"malformed signature", func(b []byte) http.Header {
			h := signed(b)
			h.Set("X-Slack-Signature", "v1=abc")
			return h
		}, top.JSON(), 401, "not v0= and 64 hex digits", nil},
		{"stale timestamp (a replay)", func(b []byte) http.Header { return slacktest.Headers(goodSecret, time.Now().Add(-6*time.Minute), b) }, top.JSON(), 401, "the tolerance is 5m0s", nil},
		{"the same second written another way is other signed content", func(b []byte) http.Header {
			h := signed(b)
			h.Set("X-Slack-Request-Timestamp", "+"+h.Get("X-Slack-Request-Timestamp"))
			return h
		}, top.JSON(), 401, "does not match the body", nil},
		{"timestamp from the future", func(b []byte) http.Header { return slacktest.Headers(goodSecret, time.Now().Add(6*time.Minute), b) }, top.JSON(), 401, "the tolerance is 5m0s", nil},
		{"the bot's own message, by bot_id", signed, slacktest.Message{EventID: "Ev03", Channel: "C0GENERAL", Text: "echo", TS: "1.2", BotID: "B0BOT"}.JSON(), 202, "bot's own message", nil},
		{"the bot's own message, by its user", signed, slacktest.Message{EventID: "Ev04", Channel: "C0GENERAL", User: "U0BOT", BotUser: "U0BOT", Text: "echo", TS: "1.3"}.JSON(), 202, "bot's own message", nil},
		{"an edit is not a new message", signed, slacktest.Message{EventID: "Ev05", Channel: "C0GENERAL", User: "U0ALICE", Subtype: "message_changed", Text: "x", TS: "1.4"}.JSON(), 202, "not stored", nil},
		{"a channel no stream follows", signed, slacktest.Message{EventID: "Ev06", Channel: "C0OTHER", User: "U0ALICE", Text: "hi", TS: "1.5"}.JSON(), 202, "no slack stream follows channel C0OTHER", nil},
		{"not JSON", signed, []byte("nope"), 400, "not Events API JSON", nil},
		{"JSON nested 1,000 deep", signed, []byte(`{"a":` + strings.Repeat("[", 999) + strings.Repeat("]", 999) + "}"), 400, "body: is JSON nested more than 100 levels deep; the limit is 100", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, "")
			code, answer := f.post(t, tt.header(tt.body), tt.body)
			if code != tt.wantStatus || !strings.Contains(answer, tt.wantIn) {
				t.Fatalf("answered %d %s, want %d containing %q", code, answer, tt.wantStatus, tt.wantIn)
			}
			for _, s := range []string{"s-general", "s-thread"} {
				if got := len(f.events(t, s)); got != tt.wantNew[s] {
					t.Errorf("%s holds %d events, want %d", s, got, tt.wantNew[s])
				}
			}
		})
	}
}

// TestMessageEnvelope: a thread reply is stored with its thread, so a
// worker's answer lands there; the follower is woken.
func TestMessageEnvelope(t *testing.T) {
	f := newFixture(t, "")
	m := slacktest.Message{EventID: "Ev10", Channel: "C0GENERAL", User: "U0BOB", Text: "on it", TS: "1712345680.000900", ThreadTS: "1712345678.000200"}
	if code, answer := f.post(t, slacktest.Headers(goodSecret, time.Now(), m.JSON()), m.JSON()); code != 200 {
		t.Fatalf("%d %s", code, answer)
	}
	ev := f.events(t, "s-general")[0]
	got := ev.Message
	if got.From != "U0BOB" || got.Body != "on it" || got.ThreadID != "1712345678.000200" || got.InReplyTo != "1712345678.000200" ||
		got.MessageID != "1712345680.000900" || ev.Source != "" {
		t.Errorf("stored %+v from %q", got, ev.Source)
	}
	var extra map[string]any
	if json.Unmarshal(got.Extra, &extra) != nil || extra["channel"] != "C0GENERAL" || extra["event_id"] != "Ev10" {
		t.Errorf("extra = %s", got.Extra)
	}
	if ws, _ := f.st.WorkersWithPending(t.Context()); len(ws) != 1 || ws[0] != "w-bot" {
		t.Errorf("workers woken: %v, want w-bot", ws)
	}
}

// TestRetriesStoredOnce: Slack retries an event it thinks failed, with
// X-Slack-Retry-Num; the event_id stores it once.
func TestRetriesStoredOnce(t *testing.T) {
	f := newFixture(t, "")
	for i := range 3 {
		h := slacktest.Headers(goodSecret, time.Now(), top.JSON())
		if i > 0 {
			h.Set(slack.HeaderRetryNum, string(rune('0'+i)))
			h.Set("X-Slack-Retry-Reason", "http_timeout")
		}
		code, answer := f.post(t, h, top.JSON())
		if code != 200 || strings.Contains(answer, `"duplicate":true`) != (i > 0) {
			t.Fatalf("attempt %d: %d %s", i, code, answer)
		}
	}
	if n := len(f.events(t, "s-general")); n != 1 {
		t.Errorf("stored %d events, want 1", n)
	}
}

// TestNoSigningSecret: until the operator sets one, every event is refused.
func TestNoSigningSecret(t *testing.T) {
	f := newFixture(t, `{"bot_token":"`+botToken+`"}`)
	code, answer := f.post(t, slacktest.Headers(goodSecret, time.Now(), top.JSON()), top.JSON())
	if code != 401 || !strings.Contains(answer, "no signing_secret") {
		t.Errorf("%d %s, want 401 naming signing_secret", code, answer)
	}
}

// TestSecretsAcceptedAtConfigWork: a signing secret `config set` accepts
// is one the endpoint verifies with; one it refuses is refused naming the
// field, never quoting the value.
func TestSecretsAcceptedAtConfigWork(t *testing.T) {
	for _, tt := range []struct {
		name, secret string
		ok           bool
	}{
		{"as Slack shows it", goodSecret, true},
		{"shortest", "0123456789abcdef", true},
		{"longest", strings.Repeat("ab", 64), true},
		{"upper case", strings.ToUpper(goodSecret), false},
		{"pasted with a newline", goodSecret + "\n", false},
		{"pasted with spaces", " " + goodSecret, false},
		{"not hex", signingSecret, false},
		{"too short", "0123456789abcde", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			value, _ := json.Marshal(map[string]string{"signing_secret": tt.secret, "bot_token": botToken})
			err := slack.ConfigSetting.Check(string(value))
			if !tt.ok {
				if !errors.Is(err, domain.ErrInvalid) || !strings.Contains(err.Error(), "signing_secret") || strings.Contains(err.Error(), strings.TrimSpace(tt.secret)) {
					t.Fatalf("Check = %v, want a refusal naming signing_secret without the value", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			f := newFixture(t, string(value))
			if code, answer := f.post(t, slacktest.Headers(tt.secret, time.Now(), top.JSON()), top.JSON()); code != 200 {
				t.Errorf("a secret accepted at config is not verified: %d %s", code, answer)
			}
		})
	}
}

// TestRepliesThreaded: what a worker publishes goes out with
// chat.postMessage in the thread it answers, with the bot token; what
// Slack refuses for good fails at once, a rate limit waits.
func TestRepliesThreaded(t *testing.T) {
	f := newFixture(t, "")
	inThread := slacktest.Message{EventID: "Ev20", Channel: "C0GENERAL", User: "U0BOB", Text: "status?", TS: "1712345680.000900", ThreadTS: "1712345678.000200"}
	f.post(t, slacktest.Headers(goodSecret, time.Now(), top.JSON()), top.JSON())
	f.post(t, slacktest.Headers(goodSecret, time.Now(), inThread.JSON()), inThread.JSON())
	evs := f.events(t, "s-general")
	engine := outbox.New(f.st, []delivery.Sender{slack.NewSender(f.st, nil)}, outbox.Options{})
	tests := []struct {
		name string
		msg  domain.Message
		want slacktest.Post
	}{
		{"inReplyTo a top-level message starts its thread", domain.Message{Body: "looking", InReplyTo: evs[0].ID},
			slacktest.Post{Token: botToken, Channel: "C0GENERAL", Text: "looking", ThreadTS: "1712345678.000200"}},
		{"inReplyTo a thread reply stays in that thread", domain.Message{Body: "green now", InReplyTo: evs[1].ID},
			slacktest.Post{Token: botToken, Channel: "C0GENERAL", Text: "green now", ThreadTS: "1712345678.000200"}},
		{"threadId a Slack ts", domain.Message{Body: "also", ThreadID: "1712345678.000200"},
			slacktest.Post{Token: botToken, Channel: "C0GENERAL", Text: "also", ThreadTS: "1712345678.000200"}},
		{"neither: a new message in the channel", domain.Message{Body: "good morning"},
			slacktest.Post{Token: botToken, Channel: "C0GENERAL", Text: "good morning"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.msg.From = "w-bot"
			ev, err := f.st.Append(t.Context(), domain.Event{StreamID: "s-general", Source: "w-bot", Message: tt.msg}, store.AppendOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if err := engine.Step(t.Context()); err != nil {
				t.Fatal(err)
			}
			got := f.slack.Next(t)
			// The remote's id of the message is recorded on its delivery.
			if ds, err := f.st.ListDeliveries(t.Context(), store.DeliveryQuery{EventID: ev.ID}); err != nil || len(ds) != 1 || ds[0].RemoteID == "" || ds[0].RemoteID != got.TS {
				t.Errorf("delivery of %s: %+v, %v; want it delivered as %v", ev.ID, ds, err, got.TS)
			}
			if tt.want.TS = got.TS; got != tt.want {
				t.Errorf("chat.postMessage got %+v, want %+v", got, tt.want)
			}
		})
	}
	t.Run("refusals", func(t *testing.T) {
		s := slack.NewSender(f.st, nil)
		st, _ := f.st.StreamWithSecrets(t.Context(), "s-general")
		ev := domain.Event{ID: "e-x", StreamID: "s-general", Message: domain.Message{Body: "hi"}}
		f.slack.Script(slacktest.Reply{Error: "channel_not_found"}, slacktest.Reply{Status: 429, RetryAfter: 7})
		if out := s.Send(t.Context(), st, ev, 1); !out.Permanent || !strings.Contains(out.Err.Error(), "channel_not_found") {
			t.Errorf("channel_not_found: %+v, want a permanent failure", out)
		}
		if out := s.Send(t.Context(), st, ev, 2); out.Permanent || out.RetryAfter != 7*time.Second || out.Status != 429 {
			t.Errorf("429: %+v, want a retry after 7s", out)
		}
	})
}

// TestContact: the address set_contact takes for Slack is a channel id,
// and the contact stream it makes is a valid slack stream, shown as chat.
func TestContact(t *testing.T) {
	for _, tt := range []struct{ name, address, want string }{
		{"the DM with the bot", "D0LEE", `{"channel":"D0LEE"}`},
		{"a channel's name", "#billing", `address: "#billing" must be a Slack channel id`},
		{"a user id", "U0LEE", `address: "U0LEE" must be a Slack channel id`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := slack.Transport.Contact.Stream("w-lee", tt.address)
			if err != nil {
				if !errors.Is(err, domain.ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("err = %v, want ErrInvalid containing %q", err, tt.want)
				}
				return
			}
			if string(cfg) != tt.want || slack.Transport.Check(cfg) != nil || slack.Transport.Contact.Mail {
				t.Errorf("contact stream %s (check: %v), want %s, shown as chat", cfg, slack.Transport.Check(cfg), tt.want)
			}
		})
	}
}

// TestContactSender: Lee's contact is a Slack channel and the owner's DM
// to Lee went there. What comes back is Lee's answer on the DM only from
// a DM with the bot, where Lee is the only one who can write; in a
// channel anyone may have, so it lands as an unverified message from
// the user who wrote it.
func TestContactSender(t *testing.T) {
	for _, tt := range []struct {
		name, address string
		msg           slacktest.Message
		wantLee       bool
	}{
		{"Lee in the DM with the bot", "D0LEE", slacktest.Message{Channel: "D0LEE", User: "U0LEE"}, true},
		{"a shared channel: whoever wrote", "C0SHARED", slacktest.Message{Channel: "C0SHARED", User: "U0LEE"}, false},
		{"a group DM", "G0GROUP", slacktest.Message{Channel: "G0GROUP", User: "U0LEE", ChannelType: "mpim"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, "")
			ctx := t.Context()
			_, err := f.st.CreatePosition(ctx, store.OwnerWorker, domain.Position{ID: "p-lee", RoleID: "r-bot", Title: "Lead"})
			must(t, err)
			_, err = f.st.HireWorker(ctx, store.OwnerWorker, domain.Worker{ID: "w-lee", Kind: domain.WorkerHuman, PositionID: "p-lee", Name: "Lee"}, nil)
			must(t, err)
			_, err = f.st.SetContact(ctx, store.OwnerWorker, "w-lee", store.Contact{Kind: string(slack.Kind), Address: tt.address})
			must(t, err)
			dm, err := f.st.EnsureDM(ctx, store.OwnerWorker, "w-lee")
			must(t, err)
			_, err = f.st.Append(ctx, domain.Event{StreamID: dm.ID, Source: store.OwnerWorker, Message: domain.Message{Body: "May I refund order 7?"}}, store.AppendOptions{})
			must(t, err)

			tt.msg.EventID, tt.msg.Text, tt.msg.TS = "Ev0LEE", "Yes, refund it.", "1712346100.000100"
			if code, answer := f.post(t, slacktest.Headers(goodSecret, time.Now(), tt.msg.JSON()), tt.msg.JSON()); code != 200 {
				t.Fatalf("the answer: %d %s", code, answer)
			}
			evs := f.events(t, dm.ID)
			got := evs[len(evs)-1]
			var extra map[string]string
			json.Unmarshal(got.Message.Extra, &extra)
			switch {
			case tt.wantLee && (got.Source != "w-lee" || got.Message.Body != "Yes, refund it." || extra["verifiedBy"] != "slack-im"):
				t.Errorf("on the DM: %q %q %v; want Lee's answer, verified by slack-im", got.Source, got.Message.Body, extra)
			case !tt.wantLee && (got.Source != "" || got.Message.From != "U0LEE" || extra["unverifiedSender"] != "U0LEE" ||
				!strings.HasPrefix(got.Message.Body, "Unverified sender U0LEE, not shown to be w-lee:")):
				t.Errorf("on the DM: %q from %q: %q %v; want an unverified message from U0LEE", got.Source, got.Message.From, got.Message.Body, extra)
			}
		})
	}
}
