package discord_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/outbox"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/transports/delivery"
	"github.com/helixml/helix-org/transports/discord"
	"github.com/helixml/helix-org/transports/discord/discordtest"
)

// publish appends what w-bot says on stream and has the engine send it.
func (f fixture) publish(t *testing.T, engine *outbox.Engine, stream string, m domain.Message) domain.Event {
	t.Helper()
	m.From = "w-bot"
	ev, err := f.st.Append(t.Context(), domain.Event{StreamID: stream, Source: "w-bot", Message: m}, store.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := engine.Step(t.Context()); err != nil {
		t.Fatal(err)
	}
	return ev
}

// remoteID is the Discord message id recorded on ev's delivery.
func (f fixture) remoteID(t *testing.T, ev domain.Event) string {
	t.Helper()
	ds, err := f.st.ListDeliveries(t.Context(), store.DeliveryQuery{EventID: ev.ID})
	if err != nil || len(ds) != 1 || ds[0].Status != domain.DeliveryDelivered {
		t.Fatalf("delivery of %s: %+v, %v; want it delivered", ev.ID, ds, err)
	}
	return ds[0].RemoteID
}

// TestRepliesInThreads: an answer to a message in the channel starts a
// thread from it and is posted there; an answer in a thread is a reply
// there; a threadId of a message with no thread yet starts one; with
// neither, the message goes to the channel; a long one goes in parts.
// The bot's own messages coming back through the Gateway are not stored.
func TestRepliesInThreads(t *testing.T) {
	f := newFixture(t)
	run(t, f.st, nil)
	connected(t, f.discord)
	thread := "1200000000000000050"
	f.discord.Thread(general, thread)
	top := f.discord.Send(discordtest.Message{ChannelID: general, AuthorID: ada, Author: "ada", Content: "Is the build green?\nIt failed at 9."})
	inThread := f.discord.Send(discordtest.Message{ChannelID: thread, AuthorID: ada, Author: "ada", Content: "and the docs?"})
	other := f.discord.Send(discordtest.Message{ChannelID: general, AuthorID: ada, Author: "ada", Content: "deploy?"})
	evs := f.waitEvents(t, "s-general", 3)
	engine := outbox.New(f.st, []delivery.Sender{discord.NewSender(f.st, nil)}, outbox.Options{})

	ev := f.publish(t, engine, "s-general", domain.Message{Body: "Green now.", InReplyTo: evs[0].ID})
	id, parent, name := f.discord.NextThread(t)
	if id != top || parent != general || name != "Is the build green?" {
		t.Errorf("thread %s of %s named %q, want one from %s of %s named after its first line", id, parent, name, top, general)
	}
	got := f.discord.NextPost(t)
	if got.ChannelID != top || got.Content != "Green now." || got.ReplyTo != "" || f.remoteID(t, ev) != got.ID {
		t.Errorf("posted %+v, want Green now. in thread %s, recorded on the delivery", got, top)
	}

	f.publish(t, engine, "s-general", domain.Message{Body: "Docs too.", InReplyTo: evs[1].ID})
	if got := f.discord.NextPost(t); got.ChannelID != thread || got.ReplyTo != inThread {
		t.Errorf("posted %+v, want a reply to %s in thread %s", got, inThread, thread)
	}

	f.publish(t, engine, "s-general", domain.Message{Body: "Deploying.", ThreadID: other})
	if id, _, _ := f.discord.NextThread(t); id != other {
		t.Errorf("thread %s, want one started from %s", id, other)
	}
	if got := f.discord.NextPost(t); got.ChannelID != other || got.Content != "Deploying." {
		t.Errorf("posted %+v, want it in the new thread %s", got, other)
	}

	f.publish(t, engine, "s-general", domain.Message{Body: "Good morning."})
	if got := f.discord.NextPost(t); got.ChannelID != general {
		t.Errorf("posted %+v, want it in the channel", got)
	}

	long := strings.Repeat("word ", 500) + "\n" + strings.Repeat("more ", 100)
	f.publish(t, engine, "s-general", domain.Message{Body: long})
	first, second := f.discord.NextPost(t), f.discord.NextPost(t)
	if first.Content+second.Content != long || len([]rune(first.Content)) > discord.MaxContent {
		t.Errorf("a %d-character message went as %d + %d characters", len(long), len(first.Content), len(second.Content))
	}

	// The bot's own posts came back as MESSAGE_CREATE; none was stored.
	f.discord.Send(discordtest.Message{ChannelID: general, AuthorID: ada, Author: "ada", Content: "thanks"})
	f.waitEvents(t, "s-general", 3+5+1)
	for _, ev := range f.events(t, "s-general") {
		if ev.Source == "" && ev.Message.From == "helix" {
			t.Errorf("the bot's own message was stored: %+v", ev.Message)
		}
	}
}

// TestSendRefusals: what Discord refuses for good fails at once, a rate
// limit waits what it says, and a retry after a lost answer posts nothing
// twice (the nonce).
func TestSendRefusals(t *testing.T) {
	f := newFixture(t)
	s := discord.NewSender(f.st, nil)
	stream, err := f.st.StreamWithSecrets(t.Context(), "s-general")
	must(t, err)
	ev := domain.Event{ID: "e-once", StreamID: "s-general", Message: domain.Message{Body: "hello"}}
	tests := []struct {
		name      string
		settings  string
		script    []discordtest.Reply
		permanent bool
		retry     time.Duration
		wantErr   string
	}{
		{name: "rate limited", script: []discordtest.Reply{{Status: 429, RetryAfter: 1.5}}, retry: 2 * time.Second, wantErr: "answered 429: You are being rate limited."},
		{name: "no access", script: []discordtest.Reply{{Status: 403, Code: 50001}}, permanent: true, wantErr: "answered 403: Forbidden (code 50001)"},
		{name: "Discord down", script: []discordtest.Reply{{Status: 502}}, wantErr: "answered 502"},
		{name: "a wrong token", settings: `{"bot_token":"` + strings.Replace(token, "abc", "xyz", 1) + `","api_url":"` + f.discord.URL + `"}`, permanent: true, wantErr: "answered 401: 401: Unauthorized"},
		{name: "no token yet: waits", settings: `{"api_url":"` + f.discord.URL + `"}`, wantErr: "transport.discord has no bot_token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.settings == "" {
				tt.settings = `{"bot_token":"` + token + `","api_url":"` + f.discord.URL + `"}`
			}
			must(t, f.st.SetSetting(t.Context(), discord.ConfigSetting, tt.settings))
			f.discord.Script(tt.script...)
			out := s.Send(t.Context(), stream, ev, 1)
			if out.Err == nil || !strings.Contains(out.Err.Error(), tt.wantErr) || out.Permanent != tt.permanent || out.RetryAfter != tt.retry ||
				strings.Contains(out.Err.Error(), "abcdefghijklmnop") {
				t.Errorf("outcome %+v, want an error containing %q, permanent %v, retry after %v, without the token", out, tt.wantErr, tt.permanent, tt.retry)
			}
		})
	}
	t.Run("a retry posts once", func(t *testing.T) {
		must(t, f.st.SetSetting(t.Context(), discord.ConfigSetting, `{"bot_token":"`+token+`","api_url":"`+f.discord.URL+`"}`))
		a, b := s.Send(t.Context(), stream, ev, 1), s.Send(t.Context(), stream, ev, 2)
		if a.Err != nil || b.Err != nil || a.RemoteID == "" || a.RemoteID != b.RemoteID {
			t.Errorf("two attempts: %+v and %+v, want the same message", a, b)
		}
	})
}

// TestContactSender: Lee is reached on Discord by user id. The owner's DM
// to Lee goes to Lee's DMs with the bot; Lee's reply there comes back as
// Lee's answer, vouched for by Discord's author id. Another person
// writing to the bot never reaches Lee's contact stream.
func TestContactSender(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	_, err := f.st.CreatePosition(ctx, store.OwnerWorker, domain.Position{ID: "p-lee", RoleID: "r-bot", Title: "Lead"})
	must(t, err)
	_, err = f.st.HireWorker(ctx, store.OwnerWorker, domain.Worker{ID: "w-lee", Kind: domain.WorkerHuman, PositionID: "p-lee", Name: "Lee"}, nil)
	must(t, err)
	_, err = f.st.SetContact(ctx, store.OwnerWorker, "w-lee", store.Contact{Kind: string(discord.Kind), Address: lee})
	must(t, err)
	run(t, f.st, nil)
	connected(t, f.discord)
	dm, err := f.st.EnsureDM(ctx, store.OwnerWorker, "w-lee")
	must(t, err)
	_, err = f.st.Append(ctx, domain.Event{StreamID: dm.ID, Source: store.OwnerWorker, Message: domain.Message{Body: "May I refund order 7?"}}, store.AppendOptions{})
	must(t, err)
	engine := outbox.New(f.st, []delivery.Sender{discord.NewSender(f.st, nil)}, outbox.Options{})
	must(t, engine.Step(ctx))
	asked := f.discord.NextPost(t)
	if asked.ChannelID != f.discord.DMChannel(lee) || !strings.Contains(asked.Content, "May I refund order 7?") {
		t.Fatalf("posted %+v, want the question in Lee's DMs", asked)
	}
	f.discord.Send(discordtest.Message{ChannelID: f.discord.DMChannel(ada), AuthorID: ada, Author: "ada", Content: "I am Lee, refund it"})
	f.discord.Send(discordtest.Message{ChannelID: asked.ChannelID, AuthorID: lee, Author: "lee", Content: "Yes, refund it.", ReplyTo: asked.ID})
	var got domain.Event
	eventually(t, "Lee's answer on the DM", func() bool {
		evs := f.events(t, dm.ID)
		got = evs[len(evs)-1]
		return got.Source == "w-lee"
	})
	var extra map[string]string
	json.Unmarshal(got.Message.Extra, &extra)
	if got.Message.Body != "Yes, refund it." || extra["verifiedBy"] != "discord-user" {
		t.Errorf("on the DM: %q %v; want Lee's answer, verified by discord-user", got.Message.Body, extra)
	}
	for _, ev := range f.events(t, "s-contact-w-lee") {
		if strings.Contains(ev.Message.Body, "I am Lee") {
			t.Errorf("another person's DM reached Lee's contact stream: %+v", ev.Message)
		}
	}
}
