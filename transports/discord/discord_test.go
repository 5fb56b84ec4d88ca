package discord_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
	"github.com/helixml/helix-org/transports/discord"
	"github.com/helixml/helix-org/transports/discord/discordtest"
	"github.com/helixml/helix-org/transports/transport"
)

const (
	token   = "MTEwMDAwMDAwMDAwMDAwMDAwMQ.GhXk3a.abcdefghijklmnopqrstuvwxyz012345"
	guild   = "1200000000000000001"
	general = "1200000000000000002"
	ada     = "1000000000000000007"
	lee     = "1000000000000000009"
)

// fixture: discord stream s-general (channel general, followed by AI
// worker w-bot), a fake Discord, and the store.
type fixture struct {
	st      *store.Store
	discord *discordtest.Server
}

func newFixture(t testing.TB) fixture {
	t.Helper()
	st := storetest.NewWith(t, store.Options{Transports: transport.List{discord.Transport}.Specs()})
	ctx := t.Context()
	fake := discordtest.New(t, token)
	fake.Channel(guild, general)
	must(t, st.SetSetting(ctx, discord.ConfigSetting, `{"bot_token":"`+token+`","api_url":"`+fake.URL+`"}`))
	_, err := st.Bootstrap(ctx, []string{"publish"})
	must(t, err)
	_, err = st.CreateRole(ctx, store.OwnerWorker, domain.Role{ID: "r-bot", Title: "Bot", Content: "Answer on Discord."})
	must(t, err)
	_, err = st.CreatePosition(ctx, store.OwnerWorker, domain.Position{ID: "p-bot", RoleID: "r-bot", Title: "Bot"})
	must(t, err)
	_, err = st.HireWorker(ctx, store.OwnerWorker, domain.Worker{ID: "w-bot", Kind: domain.WorkerAI, PositionID: "p-bot", Name: "Bot"}, nil)
	must(t, err)
	_, err = st.CreateStream(ctx, store.OwnerWorker, domain.Stream{ID: "s-general", Name: "general",
		Transport: domain.Transport{Kind: discord.Kind, Config: json.RawMessage(`{"channel":"` + general + `"}`)}})
	must(t, err)
	_, err = st.Subscribe(ctx, store.OwnerWorker, "s-general", "w-bot")
	must(t, err)
	return fixture{st: st, discord: fake}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("setup: %v", err)
	}
}

// run runs the gateway loop over st until the test ends.
func run(t testing.TB, st transport.Store, logs *servertest.Logs) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	g := &discord.Gateway{Store: st, Backoff: 5 * time.Millisecond, MaxBackoff: 50 * time.Millisecond}
	if logs != nil {
		g.Logger = logs.Logger()
	}
	go func() { g.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

// eventually polls cond until it holds, failing after 30s.
func eventually(t testing.TB, what string, cond func() bool) {
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

func (f fixture) events(t testing.TB, stream string) []domain.Event {
	t.Helper()
	evs, err := f.st.ReadEvents(context.Background(), store.EventQuery{StreamIDs: []string{stream}})
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// waitEvents waits until stream holds n events.
func (f fixture) waitEvents(t testing.TB, stream string, n int) []domain.Event {
	t.Helper()
	var evs []domain.Event
	eventually(t, "event on "+stream, func() bool { evs = f.events(t, stream); return len(evs) >= n })
	if len(evs) != n {
		t.Fatalf("%s holds %d events, want %d", stream, len(evs), n)
	}
	return evs
}

func connected(t testing.TB, fake *discordtest.Server) {
	t.Helper()
	select {
	case <-fake.Connected():
	case <-time.After(30 * time.Second):
		t.Fatal("no session within 30s")
	}
}

// TestStreamConfig: what create_stream and set_contact accept.
func TestStreamConfig(t *testing.T) {
	for _, tt := range []struct{ name, config, want string }{
		{"a channel", `{"channel":"` + general + `"}`, ""},
		{"a person's DMs", `{"user":"` + ada + `"}`, ""},
		{"neither", `{}`, "transport.config.channel: is required"},
		{"both", `{"channel":"` + general + `","user":"` + ada + `"}`, "transport.config.user: goes without channel"},
		{"a #name", `{"channel":"#general"}`, `transport.config.channel: "#general" must be a channel id`},
		{"a user name", `{"user":"ada"}`, `transport.config.user: "ada" must be a user id`},
		{"a guild key", `{"guild":"1"}`, `unknown field "guild"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := discord.Transport.Check(json.RawMessage(tt.config))
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
	for _, tt := range []struct{ name, address, want string }{
		{"a user id", ada, `{"user":"` + ada + `"}`},
		{"a name", "ada#0001", `address: "ada#0001" must be the person's Discord user id`},
	} {
		t.Run("contact "+tt.name, func(t *testing.T) {
			cfg, err := discord.Transport.Contact.Stream("w-ada", tt.address)
			if err != nil {
				if !errors.Is(err, domain.ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("err = %v, want %q", err, tt.want)
				}
				return
			}
			if string(cfg) != tt.want || discord.Transport.Check(cfg) != nil {
				t.Errorf("contact stream %s, want %s", cfg, tt.want)
			}
		})
	}
}

// TestSettings: transport.discord refuses what the loop could not use,
// never quoting the token.
func TestSettings(t *testing.T) {
	for _, tt := range []struct{ name, value, want string }{
		{"as the portal shows it", `{"bot_token":"` + token + `"}`, ""},
		{"with Bot in front", `{"bot_token":"Bot ` + token + `"}`, "bot_token: must be the bot's token"},
		{"a pasted newline", `{"bot_token":"` + token + `\n"}`, "bot_token: must be the bot's token"},
		{"not a URL", `{"api_url":"discord.com"}`, "api_url:"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := discord.ConfigSetting.Check(tt.value)
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "abcdefghijklmnop") {
				t.Errorf("Check = %v, want an error containing %q without the token", err, tt.want)
			}
		})
	}
}

// TestGatewayMessages: the loop identifies with the intents it needs and
// stores what people write in the channel and its threads, each once,
// waking the follower; bots' messages and other channels are not stored.
func TestGatewayMessages(t *testing.T) {
	f := newFixture(t)
	run(t, f.st, nil)
	connected(t, f.discord)
	if ids := f.discord.Identifies(); len(ids) != 1 || ids[0].Token != token || ids[0].Intents != discord.Intents ||
		ids[0].Intents&discordtest.MessageContentIntent == 0 {
		t.Fatalf("identifies %+v, want one with the token and MESSAGE_CONTENT", ids)
	}
	other := "1200000000000000099"
	f.discord.Channel(guild, other)
	thread := "1200000000000000050"
	f.discord.Thread(general, thread)
	f.discord.Send(discordtest.Message{ChannelID: other, AuthorID: ada, Author: "ada", Content: "elsewhere"})
	f.discord.Send(discordtest.Message{ChannelID: general, AuthorID: "1100000000000000077", Author: "ci", Bot: true, Content: "build green"})
	top := f.discord.Send(discordtest.Message{ChannelID: general, AuthorID: ada, Author: "ada", Content: "can someone look at the build?"})
	inThread := f.discord.Send(discordtest.Message{ChannelID: thread, AuthorID: ada, Author: "ada", Content: "in the thread"})
	evs := f.waitEvents(t, "s-general", 2)
	want := []domain.Message{
		{From: "ada", Body: "can someone look at the build?", MessageID: top, ThreadID: top},
		{From: "ada", Body: "in the thread", MessageID: inThread, ThreadID: thread},
	}
	for i, ev := range evs {
		got := ev.Message
		if got.From != want[i].From || got.Body != want[i].Body || got.MessageID != want[i].MessageID || got.ThreadID != want[i].ThreadID || ev.Source != "" {
			t.Errorf("event %d = %+v, want %+v", i, got, want[i])
		}
	}
	var extra map[string]any
	if json.Unmarshal(evs[1].Message.Extra, &extra) != nil || extra["channel_id"] != thread || extra["parent_id"] != general || extra["in_thread"] != true {
		t.Errorf("thread message extra = %s", evs[1].Message.Extra)
	}
	if ws, _ := f.st.WorkersWithPending(t.Context()); len(ws) != 1 || ws[0] != "w-bot" {
		t.Errorf("workers woken: %v, want w-bot", ws)
	}
}

// TestGatewayResumes: a dropped connection, the Gateway's Reconnect and a
// missed heartbeat ack are each followed by a Resume on
// resume_gateway_url from the last sequence number stored; what was sent
// meanwhile is replayed and stored once. An invalid session identifies
// anew.
func TestGatewayResumes(t *testing.T) {
	f := newFixture(t)
	f.discord.HeartbeatInterval = 40
	run(t, f.st, nil)
	connected(t, f.discord)
	f.discord.Send(discordtest.Message{ChannelID: general, AuthorID: ada, Author: "ada", Content: "one"})
	f.waitEvents(t, "s-general", 1)
	eventually(t, "heartbeat carrying the seq", func() bool {
		hb := f.discord.Heartbeats()
		return len(hb) > 0 && string(hb[len(hb)-1]) == "2"
	})
	steps := []struct {
		name  string
		cause func()
	}{
		{"a dropped connection", f.discord.Drop},
		{"op 7 Reconnect", f.discord.Reconnect},
		{"a heartbeat never acked", func() { f.discord.SkipAcks(1) }},
	}
	for i, step := range steps {
		step.cause()
		// Sent while the client is away or about to leave: the Resume
		// brings it.
		f.discord.Send(discordtest.Message{ChannelID: general, AuthorID: ada, Author: "ada", Content: step.name})
		eventually(t, "resume after "+step.name, func() bool { return len(f.discord.Resumes()) == i+1 })
		connected(t, f.discord)
		f.waitEvents(t, "s-general", i+2)
		r := f.discord.Resumes()[i]
		if r.Path != "/gateway-resume" || r.SessionID == "" {
			t.Errorf("%s: resume %+v, want one on resume_gateway_url", step.name, r)
		}
	}
	f.discord.InvalidSession(false)
	eventually(t, "identify after an invalid session", func() bool { return len(f.discord.Identifies()) == 2 })
	connected(t, f.discord)
	f.discord.Send(discordtest.Message{ChannelID: general, AuthorID: ada, Author: "ada", Content: "after"})
	evs := f.waitEvents(t, "s-general", 5)
	seen := map[string]bool{}
	for _, ev := range evs {
		if seen[ev.Message.MessageID] {
			t.Errorf("message %s stored twice", ev.Message.MessageID)
		}
		seen[ev.Message.MessageID] = true
	}
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

// TestUnstoredIsNotAcknowledged: a message whose append fails is not
// counted as received: the connection ends, the Resume names the sequence
// number before it, and Discord's replay stores it.
func TestUnstoredIsNotAcknowledged(t *testing.T) {
	f := newFixture(t)
	run(t, &failOnce{Store: f.st}, nil)
	connected(t, f.discord)
	f.discord.Send(discordtest.Message{ChannelID: general, AuthorID: ada, Author: "ada", Content: "kept"})
	evs := f.waitEvents(t, "s-general", 1)
	if rs := f.discord.Resumes(); len(rs) != 1 || rs[0].Seq != 1 {
		t.Errorf("resumes %+v, want one from seq 1 (READY), before the message that failed", rs)
	}
	if evs[0].Message.Body != "kept" {
		t.Errorf("stored %q", evs[0].Message.Body)
	}
}

// TestRefusedToken: Discord closing with 4004 (authentication failed)
// stops the loop until transport.discord changes; then it identifies
// again.
func TestRefusedToken(t *testing.T) {
	f := newFixture(t)
	logs := &servertest.Logs{}
	run(t, f.st, logs)
	connected(t, f.discord)
	f.discord.Disconnect(4004, "Authentication failed.")
	eventually(t, "the loop waiting for new settings", func() bool {
		return strings.Contains(logs.String(), "waiting for transport.discord to change") && strings.Contains(logs.String(), "4004: authentication failed")
	})
	if n := len(f.discord.Identifies()); n != 1 {
		t.Errorf("%d identifies before the token changed, want 1", n)
	}
	must(t, f.st.SetSetting(t.Context(), discord.ConfigSetting, `{"bot_token":"`+token+`","api_url":"`+f.discord.URL+`/"}`))
	eventually(t, "identify with the new settings", func() bool { return len(f.discord.Identifies()) == 2 })
}

// BenchmarkGateway: messages from the Gateway, each stored (and its
// sequence number counted) before the next, on one session to a loopback
// fake.
func BenchmarkGateway(b *testing.B) {
	f := newFixture(b)
	run(b, f.st, nil)
	connected(b, f.discord)
	b.ResetTimer()
	for i := range b.N {
		f.discord.Send(discordtest.Message{ChannelID: general, AuthorID: ada, Author: "ada", Content: "ping " + strconv.Itoa(i)})
	}
	eventually(b, "every message stored", func() bool {
		n, err := f.st.CountEvents(context.Background(), "s-general")
		return err == nil && n == int64(b.N)
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
