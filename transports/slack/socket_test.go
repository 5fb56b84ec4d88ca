//go:build !fuzzonly

// Left out of make fuzz's binaries (-tags fuzzonly): this file reaches the
// store, whose tree would be compiled again with fuzz instrumentation.

package slack_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/outbox"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/transports/delivery"
	"github.com/helixml/helix-org/transports/slack"
	"github.com/helixml/helix-org/transports/slack/slacktest"
	"github.com/helixml/helix-org/transports/transport"
)

const appToken = "xapp-1-A0APP-1234-abcdef"

// socketFixture is newFixture's org with two workers' streams, Slack
// reached over Socket Mode:
//
//	s-alice  {"worker":"w-alice"}                                   (w-alice, "Alice")
//	s-bob    {"worker":"w-bob","user":"U0BOBBOT","channel":"C0GENERAL"}  (w-bob, "Bob")
func socketFixture(t testing.TB) fixture {
	t.Helper()
	f := newFixture(t, "")
	f.slack.SocketMode(appToken)
	ctx := t.Context()
	must(t, f.st.SetSetting(ctx, slack.ConfigSetting, `{"app_token":"`+appToken+`","bot_token":"`+botToken+`","api_url":"`+f.slack.URL+`"}`))
	for _, w := range []struct{ id, name, cfg string }{
		{"w-alice", "Alice", `{"worker":"w-alice"}`},
		{"w-bob", "Bob", `{"worker":"w-bob","user":"U0BOBBOT","channel":"C0GENERAL"}`},
	} {
		_, err := f.st.HireWorker(ctx, store.OwnerWorker, domain.Worker{ID: w.id, Kind: domain.WorkerAI, PositionID: "p-bot", Name: w.name}, nil)
		must(t, err)
		stream := "s-" + strings.TrimPrefix(w.id, "w-")
		_, err = f.st.CreateStream(ctx, store.OwnerWorker, domain.Stream{ID: stream, Name: stream, Transport: domain.Transport{Kind: slack.Kind, Config: json.RawMessage(w.cfg)}})
		must(t, err)
		_, err = f.st.Subscribe(ctx, store.OwnerWorker, stream, w.id)
		must(t, err)
	}
	return f
}

// runSocket runs the Socket Mode loop over st until the test ends.
func runSocket(t testing.TB, st transport.Store, logs *servertest.Logs) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	m := &slack.SocketMode{Store: st, Backoff: 5 * time.Millisecond, MaxBackoff: 50 * time.Millisecond}
	if logs != nil {
		m.Logger = logs.Logger()
	}
	go func() { m.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

func socketUp(t testing.TB, fake *slacktest.Server) {
	t.Helper()
	select {
	case <-fake.SocketConnected():
	case <-time.After(30 * time.Second):
		t.Fatal("no Socket Mode connection within 30s")
	}
}

// sample is one of the Slack SDK's Events API samples (testdata/NOTICE).
func sample(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// eventually polls cond until it holds, failing after 30s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-deadline:
			t.Fatalf("no %s within 30s", what)
		case <-tick.C:
		}
	}
}

// push sends m over Socket Mode and waits for its acknowledgement.
func push(t *testing.T, f fixture, file string, m slacktest.Message) {
	t.Helper()
	id := f.slack.Push(slacktest.FromSample(sample(t, file), m))
	if got := f.slack.NextAck(t); got != id {
		t.Fatalf("acknowledged %s, want %s", got, id)
	}
}

func (f fixture) count(t *testing.T) map[string]int {
	t.Helper()
	n := map[string]int{}
	for _, s := range []string{"s-general", "s-thread", "s-alice", "s-bob"} {
		if c := len(f.events(t, s)); c > 0 {
			n[s] = c
		}
	}
	return n
}

// TestSocketModeRoutesMentions: over a Socket Mode session, a message
// naming a worker reaches that worker's stream (and the channel's), each
// envelope acknowledged once stored; a reply in its thread reaches the
// same worker without naming it; the worker's answer goes back in the
// thread; a thread a worker started with a post of its own reaches it
// too; nobody else's threads do.
func TestSocketModeRoutesMentions(t *testing.T) {
	f := socketFixture(t)
	runSocket(t, f.st, nil)
	socketUp(t, f.slack)
	const root, reply = "1712345678.000200", "1712345679.000300"
	steps := []struct {
		name string
		file string
		msg  slacktest.Message
		want map[string]int
	}{
		{"a message naming @Alice", "MessagePayload.json", slacktest.Message{EventID: "Ev1", Channel: "C0GENERAL", User: "U0ADA", Text: "@Alice can you check the build?", TS: root},
			map[string]int{"s-general": 1, "s-alice": 1}},
		{"a reply in its thread reaches Alice", "MessagePayload.json", slacktest.Message{EventID: "Ev2", Channel: "C0GENERAL", User: "U0ADA", Text: "it failed on lint", TS: reply, ThreadTS: root},
			map[string]int{"s-general": 2, "s-alice": 2}},
		{"another thread does not", "MessagePayload.json", slacktest.Message{EventID: "Ev3", Channel: "C0GENERAL", User: "U0ADA", Text: "lunch?", TS: "1712345680.000100", ThreadTS: "1712340000.000100"},
			map[string]int{"s-general": 3, "s-thread": 1, "s-alice": 2}},
		{"Bob by his Slack user, and by id in any case", "MessagePayload.json", slacktest.Message{EventID: "Ev4", Channel: "C0GENERAL", User: "U0ADA", Text: "<@U0BOBBOT> and @W-BOB: deploy?", TS: "1712345681.000100"},
			map[string]int{"s-general": 4, "s-thread": 1, "s-alice": 2, "s-bob": 1}},
		{"@alice.smith is someone else", "MessagePayload.json", slacktest.Message{EventID: "Ev5", Channel: "C0OTHER", User: "U0ADA", Text: "cc @alice.smith", TS: "1712345682.000100"},
			map[string]int{"s-general": 4, "s-thread": 1, "s-alice": 2, "s-bob": 1}},
		{"the bot's own message is not stored", "MessagePayload.json", slacktest.Message{EventID: "Ev6", Channel: "C0GENERAL", Text: "@Alice echo", TS: "1712345683.000100", BotID: "B0BOT"},
			map[string]int{"s-general": 4, "s-thread": 1, "s-alice": 2, "s-bob": 1}},
		{"a message_replied notice is not a new message", "MessageRepliedPayload.json", slacktest.Message{EventID: "Ev9", Channel: "C0GENERAL", Text: "@Alice", TS: "1712345685.000100", ThreadTS: root},
			map[string]int{"s-general": 4, "s-thread": 1, "s-alice": 2, "s-bob": 1}},
		{"an app_mention repeats a message event", "AppMentionPayload.json", slacktest.Message{EventID: "Ev7", Channel: "C0GENERAL", User: "U0ADA", Text: "<@U0BOT> @Alice", TS: "1712345684.000100"},
			map[string]int{"s-general": 4, "s-thread": 1, "s-alice": 2, "s-bob": 1}},
	}
	for _, s := range steps {
		push(t, f, s.file, s.msg)
		if got := f.count(t); !equal(got, s.want) {
			t.Fatalf("%s: streams hold %v, want %v", s.name, got, s.want)
		}
	}
	alice := f.events(t, "s-alice")
	if alice[0].Message.ThreadID != root || alice[1].Message.ThreadID != root || alice[1].Message.Body != "it failed on lint" {
		t.Errorf("s-alice holds %+v, want the mention and the reply in thread %s", alice, root)
	}
	if ws, _ := f.st.WorkersWithPending(t.Context()); !strings.Contains(strings.Join(ws, ","), "w-alice") {
		t.Errorf("workers woken: %v, want w-alice among them", ws)
	}

	engine := outbox.New(f.st, []delivery.Sender{slack.NewSender(f.st, nil)}, outbox.Options{})
	answer := func(stream string, m domain.Message) domain.Event {
		t.Helper()
		m.From = "w-" + strings.TrimPrefix(stream, "s-")
		ev, err := f.st.Append(t.Context(), domain.Event{StreamID: stream, Source: m.From, Message: m}, store.AppendOptions{})
		must(t, err)
		must(t, engine.Step(t.Context()))
		return ev
	}
	answer("s-alice", domain.Message{Body: "Lint is fixed.", InReplyTo: alice[1].ID})
	if got := f.slack.Next(t); got.Channel != "C0GENERAL" || got.ThreadTS != root || got.Text != "Lint is fixed." {
		t.Errorf("Alice's answer went out as %+v, want it in C0GENERAL thread %s", got, root)
	}
	answer("s-bob", domain.Message{Body: "Deploy finished."})
	post := f.slack.Next(t)
	if post.Channel != "C0GENERAL" || post.ThreadTS != "" {
		t.Fatalf("Bob's post went out as %+v, want a new message in C0GENERAL", post)
	}
	push(t, f, "MessagePayload.json", slacktest.Message{EventID: "Ev8", Channel: "C0GENERAL", User: "U0ADA", Text: "thanks! staging too?", TS: "1712346000.000100", ThreadTS: post.TS})
	if bob := f.events(t, "s-bob"); len(bob) != 3 || bob[2].Message.Body != "thanks! staging too?" {
		t.Errorf("s-bob holds %d events, want the reply in the thread Bob's post started", len(bob))
	}
	if n := len(f.events(t, "s-alice")); n != 3 {
		t.Errorf("s-alice holds %d events, want 3 (its two and its answer)", n)
	}
}

func equal(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// failOnce is the store with one AppendInbound that fails, as a database
// that is briefly unavailable does.
type failOnce struct {
	*store.Store
	failed atomic.Bool
}

func (s *failOnce) AppendInbound(ctx context.Context, in []domain.Inbound, maxBody int) ([]domain.Receipt, error) {
	if s.failed.CompareAndSwap(false, true) {
		return nil, errors.New("database is locked")
	}
	return s.Store.AppendInbound(ctx, in, maxBody)
}

// TestSocketModeAcksOnlyWhatIsStored: an envelope whose event could not
// be stored is left unacknowledged; Slack's redelivery stores it, once,
// and is acknowledged; a second redelivery is a duplicate.
func TestSocketModeAcksOnlyWhatIsStored(t *testing.T) {
	f := socketFixture(t)
	st := &failOnce{Store: f.st}
	runSocket(t, st, nil)
	socketUp(t, f.slack)
	id := f.slack.Push(slacktest.FromSample(sample(t, "MessagePayload.json"), slacktest.Message{EventID: "Ev1", Channel: "C0GENERAL", User: "U0ADA", Text: "@Alice ping", TS: "1.1"}))
	eventually(t, "a failed append", st.failed.Load)
	if un := f.slack.Unacked(); len(un) != 1 || un[0] != id || len(f.events(t, "s-alice")) != 0 {
		t.Fatalf("unacknowledged %v, s-alice %d events; want %s unacknowledged and nothing stored", un, len(f.events(t, "s-alice")), id)
	}
	f.slack.Redeliver()
	if got := f.slack.NextAck(t); got != id {
		t.Fatalf("acknowledged %s, want %s", got, id)
	}
	if got := f.count(t); !equal(got, map[string]int{"s-general": 1, "s-alice": 1}) {
		t.Errorf("streams hold %v, want the event once on s-general and s-alice", got)
	}
}

// TestSocketModeReconnects: a disconnect asking to refresh is followed by
// a new connection at once, which gets what was sent meanwhile; Socket
// Mode turned off for the app (link_disabled) and a refused app token
// stop the loop until transport.slack changes.
func TestSocketModeReconnects(t *testing.T) {
	f := socketFixture(t)
	logs := &servertest.Logs{}
	runSocket(t, f.st, logs)
	socketUp(t, f.slack)
	f.slack.Disconnect("refresh_requested")
	eventually(t, "a second connection", func() bool { return f.slack.Opens() == 2 })
	push(t, f, "MessagePayload.json", slacktest.Message{EventID: "Ev1", Channel: "C0GENERAL", User: "U0ADA", Text: "@Alice after the refresh", TS: "1.1"})
	if n := len(f.events(t, "s-alice")); n != 1 {
		t.Errorf("s-alice holds %d events, want 1", n)
	}
	socketUp(t, f.slack)
	f.slack.Disconnect("link_disabled")
	eventually(t, "the loop waiting for new settings", func() bool {
		return strings.Contains(logs.String(), "link_disabled") && strings.Contains(logs.String(), "waiting for transport.slack to change")
	})
	must(t, f.st.SetSetting(t.Context(), slack.ConfigSetting, `{"app_token":"xapp-1-A0APP-9-wrong","bot_token":"`+botToken+`","api_url":"`+f.slack.URL+`"}`))
	eventually(t, "the wrong token refused", func() bool { return strings.Contains(logs.String(), "apps.connections.open: invalid_auth") })
	if n := f.slack.Opens(); n != 2 {
		t.Errorf("%d connections opened, want 2 (none with the wrong token)", n)
	}
	must(t, f.st.SetSetting(t.Context(), slack.ConfigSetting, `{"app_token":"`+appToken+`","bot_token":"`+botToken+`","api_url":"`+f.slack.URL+`/"}`))
	eventually(t, "a connection with the right token", func() bool { return f.slack.Opens() == 3 })
}

// TestWorkerStreamConfig: what create_stream accepts for a worker's
// stream.
func TestWorkerStreamConfig(t *testing.T) {
	for _, tt := range []struct{ name, config, want string }{
		{"a worker", `{"worker":"w-alice"}`, ""},
		{"in one channel, with a Slack user", `{"worker":"w-alice","channel":"C0GENERAL","user":"U0ALICE"}`, ""},
		{"a user without a worker", `{"user":"U0ALICE"}`, "transport.config.worker: is required with user"},
		{"not a worker id", `{"worker":"alice"}`, `transport.config.worker: id "alice" must start with "w-"`},
		{"a user name", `{"worker":"w-alice","user":"@alice"}`, `transport.config.user: "@alice" must be a Slack user id`},
		{"one thread", `{"worker":"w-alice","channel":"C0GENERAL","thread_ts":"1.2"}`, "transport.config.thread_ts: goes without worker"},
		{"neither channel nor worker", `{}`, "transport.config.channel: is required"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := slack.Transport.Check(json.RawMessage(tt.config))
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, domain.ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want ErrInvalid containing %q", err, tt.want)
			}
		})
	}
}

// BenchmarkSocketMode: messages naming a worker, each stored on the
// channel's and the worker's streams and acknowledged, over one Socket
// Mode connection to a loopback fake.
func BenchmarkSocketMode(b *testing.B) {
	f := socketFixture(b)
	runSocket(b, f.st, nil)
	socketUp(b, f.slack)
	msg := sample(b, "MessagePayload.json")
	b.ResetTimer()
	for i := range b.N {
		f.slack.Push(slacktest.FromSample(msg, slacktest.Message{EventID: "Ev" + strconv.Itoa(i), Channel: "C0GENERAL", User: "U0ADA",
			Text: "@Alice ping " + strconv.Itoa(i), TS: "1712345678." + strconv.Itoa(100000+i)}))
		f.slack.NextAck(b)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
