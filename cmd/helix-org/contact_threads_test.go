package main

import (
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/safedial"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/transports/slack"
	"github.com/helixml/helix-org/transports/slack/slacktest"
	"github.com/helixml/helix-org/transports/telegram"
	"github.com/helixml/helix-org/transports/telegram/telegramtest"
)

// chatChannel is a fake chat service a human is reached on: set up on a
// store, the address of the human's chat, the remote id of the next
// message posted there, and the human replying to one of them.
type chatChannel struct {
	channel, address string
	start            func(t *testing.T, st *store.Store) (next func(t *testing.T) string, reply func(t *testing.T, base, to, text string, n int))
}

var chatChannels = []chatChannel{
	{channel: "slack", address: "D0LEE", start: func(t *testing.T, st *store.Store) (func(*testing.T) string, func(*testing.T, string, string, string, int)) {
		sl := slacktest.New(t, slackBot)
		st.SetSetting(t.Context(), slack.ConfigSetting, `{"signing_secret":"`+slackSecret+`","bot_token":"`+slackBot+`","api_url":"`+sl.URL+`"}`)
		next := func(t *testing.T) string { return sl.Next(t).TS }
		reply := func(t *testing.T, base, to, text string, n int) {
			m := slacktest.Message{EventID: "Ev0LEE" + strconv.Itoa(n), Channel: "D0LEE", User: "U0LEE", Text: text,
				TS: "1712346100.00010" + strconv.Itoa(n), ThreadTS: to}
			if code, body := postTo(t, base+"/slack/events", slacktest.Headers(slackSecret, time.Now(), m.JSON()), m.JSON()); code != http.StatusOK {
				t.Fatalf("Lee's reply in Slack: %d %s", code, body)
			}
		}
		return next, reply
	}},
	{channel: "telegram", address: "90017", start: func(t *testing.T, st *store.Store) (func(*testing.T) string, func(*testing.T, string, string, string, int)) {
		const secret, token = "lee-Secret_1", "123456:AAE-leeleeleeleeleeleelee"
		tg := telegramtest.New(t, token)
		st.SetSetting(t.Context(), telegram.ConfigSetting, `{"bot_token":"`+token+`","secret_token":"`+secret+`","api_url":"`+tg.URL+`"}`)
		next := func(t *testing.T) string { return strconv.FormatInt(tg.Next(t).MessageID, 10) }
		reply := func(t *testing.T, base, to, text string, n int) {
			replyTo, _ := strconv.ParseInt(to, 10, 64)
			m := telegramtest.Message{UpdateID: 7000 + int64(n), MessageID: 800 + int64(n), ChatID: 90017, From: "lee", Text: text, ReplyTo: replyTo}
			if code, body := postTo(t, base+"/telegram/webhook", telegramtest.Headers(secret), m.JSON()); code != http.StatusOK {
				t.Fatalf("Lee's reply in Telegram: %d %s", code, body)
			}
		}
		return next, reply
	}},
}

// TestHumanAnswersInThread: two messages reach a human's chat — a DM in
// a thread, then a message naming it on a team stream. Lee replies to
// the first (Slack's thread, Telegram's reply-to): the answer lands on
// the DM, in its thread, not on the later message; then to the second,
// which lands on the team stream. Colleagues see both with read_events.
func TestHumanAnswersInThread(t *testing.T) {
	t.Parallel()
	for _, ch := range chatChannels {
		t.Run(ch.channel, func(t *testing.T) {
			t.Parallel()
			st := demoStore(t)
			next, reply := ch.start(t, st)
			st.SetSetting(t.Context(), safedial.AllowPrivateSetting, "true") // the fakes are on loopback
			base, _, owner := startServe(t, st, io.Discard)
			hireLee(t, owner, ch.channel, ch.address)
			servertest.Call[map[string]any](t, owner, "subscribe", map[string]any{"stream": "s-billing"})

			dm := servertest.Call[struct {
				Stream string       `json:"stream"`
				Event  domain.Event `json:"event"`
			}](t, owner, "dm", map[string]any{"to": "w-lee", "threadId": "refund-7", "body": "May I refund order 7?"})
			first := next(t)
			note := servertest.Call[domain.Event](t, owner, "publish", map[string]any{"stream": "s-billing", "to": []string{"w-lee"}, "body": "Can you close the month?"})
			second := next(t)
			waitDelivered(t, st, store.ContactStreamPrefix+"w-lee", 2)

			reply(t, base, first, "Yes, refund it.", 1)
			got := waitForReply(t, owner, dm.Stream, "w-lee", dm.Event.Seq)
			if got.Message.Body != "Yes, refund it." || got.Message.ThreadID != "refund-7" || got.Message.InReplyTo != dm.Event.ID {
				t.Errorf("Lee's answer to the DM: %+v", got.Message)
			}
			reply(t, base, second, "Closing it today.", 2)
			got = waitForReply(t, owner, "s-billing", "w-lee", note.Seq)
			if got.Message.Body != "Closing it today." || got.Message.ThreadID != note.ID || got.Message.InReplyTo != note.ID {
				t.Errorf("Lee's answer on s-billing: %+v", got.Message)
			}
			if n := countFrom(t, st, dm.Stream, "w-lee"); n != 1 {
				t.Errorf("Lee answered %d times on the DM, want once", n)
			}
		})
	}
}

// waitDelivered waits until n messages on a stream are delivered, so the
// remote's ids of them are recorded before the human replies to one.
func waitDelivered(t *testing.T, st *store.Store, stream string, n int) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		changed := st.Changed()
		ds, err := st.ListDeliveries(t.Context(), store.DeliveryQuery{StreamID: stream, Status: domain.DeliveryDelivered})
		if err != nil {
			t.Fatal(err)
		}
		if len(ds) >= n {
			return
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("%d of %d deliveries on %s delivered after 30s", len(ds), n, stream)
		}
	}
}

func countFrom(t *testing.T, st *store.Store, stream, source string) int {
	t.Helper()
	n := 0
	for _, ev := range demoEvents(t, st, stream) {
		if ev.Source == source {
			n++
		}
	}
	return n
}
