package main

import (
	"encoding/json"
	"io"
	"strings"
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

// echoOrg is the real server, dispatcher and delivery engine with an AI
// worker w-echo (the echo agent: it replies `echo: <body>` inReplyTo the
// event) following the stream the caller creates.
func echoOrg(t *testing.T, setting domain.SettingSpec, value, stream, kind, config string) (*store.Store, string) {
	t.Helper()
	st := openTestStore(t)
	ctx := t.Context()
	must(t, st.SetSetting(ctx, safedial.AllowPrivateSetting, "true")) // the fakes are on loopback
	must(t, st.SetSetting(ctx, setting, value))
	base, _, owner := startServe(t, st, io.Discard)
	call := func(name string, args map[string]any) { servertest.Call[map[string]any](t, owner, name, args) }
	call("create_role", map[string]any{"id": "r-echo", "title": "Echo", "content": "When a message arrives, reply `echo: <body>` to it."})
	call("create_position", map[string]any{"id": "p-echo", "role": "r-echo", "title": "Echo"})
	call("create_stream", map[string]any{"id": stream, "name": stream, "transport": map[string]any{"kind": kind, "config": json.RawMessage(config)}})
	call("hire_worker", map[string]any{"id": "w-echo", "position": "p-echo", "kind": "ai", "name": "Echo", "grants": []string{"publish", "read_events"}})
	call("invite_workers", map[string]any{"stream": stream, "workers": []string{"w-echo"}})
	waitIdle(t, st) // the hire's run is over
	return st, base
}

// TestSlackEndToEnd: a thread reply in a Slack channel, signed as Slack
// signs it, wakes the worker; its answer goes out through chat.postMessage
// in that thread; Slack's retry of the event and the bot's own message
// coming back are stored no more.
func TestSlackEndToEnd(t *testing.T) {
	t.Parallel()
	const secret, token = "8f742231b10e8888abcd99ef00ff85a5", "xoxb-1-2-abcdef"
	fake := slacktest.New(t, token)
	st, base := echoOrg(t, slack.ConfigSetting, `{"signing_secret":"`+secret+`","bot_token":"`+token+`","api_url":"`+fake.URL+`"}`,
		"s-general", "slack", `{"channel":"C0GENERAL"}`)
	in := slacktest.Message{EventID: "Ev100", Channel: "C0GENERAL", User: "U0ADA", Text: "is the build green?", TS: "1712345680.000900", ThreadTS: "1712345678.000200"}
	if code, answer := postTo(t, base+"/slack/events", slacktest.Headers(secret, time.Now(), in.JSON()), in.JSON()); code != 200 {
		t.Fatalf("event: %d %s", code, answer)
	}
	got := fake.Next(t)
	want := slacktest.Post{Token: token, Channel: "C0GENERAL", Text: "echo: is the build green?", ThreadTS: "1712345678.000200", TS: "1712345999.000001"}
	if got != want {
		t.Errorf("chat.postMessage = %+v, want %+v", got, want)
	}
	retry := slacktest.Headers(secret, time.Now(), in.JSON())
	retry.Set(slack.HeaderRetryNum, "1")
	if code, answer := postTo(t, base+"/slack/events", retry, in.JSON()); code != 200 || !strings.Contains(answer, `"duplicate":true`) {
		t.Errorf("retry: %d %s, want 200 duplicate", code, answer)
	}
	echo := slacktest.Message{EventID: "Ev101", Channel: "C0GENERAL", Text: got.Text, TS: "1712345999.000001", ThreadTS: got.ThreadTS, BotID: "B0BOT"}
	if code, _ := postTo(t, base+"/slack/events", slacktest.Headers(secret, time.Now(), echo.JSON()), echo.JSON()); code != 202 {
		t.Errorf("the bot's own message: %d, want 202", code)
	}
	waitIdle(t, st)
	evs, _ := st.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{"s-general"}})
	if len(evs) != 2 || evs[1].Source != "w-echo" {
		t.Errorf("s-general holds %d events (%+v), want the message and the worker's reply", len(evs), evs)
	}
}

// TestTelegramEndToEnd: a message in a forum topic, with the webhook's
// secret token, wakes the worker; its answer goes out with sendMessage as
// a reply in that topic; a redelivery is stored no more.
func TestTelegramEndToEnd(t *testing.T) {
	t.Parallel()
	const secret, token = "hook-Secret_1", "123456:AAE-abcdefghijklmnopqrstuvwxyz"
	fake := telegramtest.New(t, token)
	st, base := echoOrg(t, telegram.ConfigSetting, `{"bot_token":"`+token+`","secret_token":"`+secret+`","api_url":"`+fake.URL+`"}`,
		"s-team", "telegram", `{"chat_id":"-1001234567890"}`)
	in := telegramtest.Message{UpdateID: 777, MessageID: 41, ChatID: -1001234567890, Topic: 7, From: "ada", Text: "deploy done?"}
	if code, answer := postTo(t, base+"/telegram/webhook", telegramtest.Headers(secret), in.JSON()); code != 200 {
		t.Fatalf("update: %d %s", code, answer)
	}
	got := fake.Next(t)
	want := telegramtest.Sent{ChatID: -1001234567890, Text: "echo: deploy done?", ReplyToMessageID: 41, MessageThreadID: 7, MessageID: 501}
	if got != want {
		t.Errorf("sendMessage = %+v, want %+v", got, want)
	}
	if code, answer := postTo(t, base+"/telegram/webhook", telegramtest.Headers(secret), in.JSON()); code != 200 || !strings.Contains(answer, `"duplicate":true`) {
		t.Errorf("redelivery: %d %s, want 200 duplicate", code, answer)
	}
	if code, _ := postTo(t, base+"/telegram/webhook", telegramtest.Headers("wrong"), in.JSON()); code != 401 {
		t.Errorf("wrong secret token: %d, want 401", code)
	}
	waitIdle(t, st)
	evs, _ := st.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{"s-team"}})
	if len(evs) != 2 || evs[1].Source != "w-echo" {
		t.Errorf("s-team holds %d events, want the message and the worker's reply", len(evs))
	}
}
