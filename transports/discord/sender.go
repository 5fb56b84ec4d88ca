package discord

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/transports/delivery"
	"github.com/helixml/helix-org/transports/transport"
)

// MaxContent is the longest message Discord takes; a longer body goes out
// as several, in order.
const MaxContent = 2000

// Sender posts what workers publish on discord streams.
type Sender struct {
	delivery.HTTP

	mu  sync.Mutex
	dms map[string]string // user id → DM channel id
}

// NewSender returns the sender. Redirects are never followed, so the token
// only ever goes to api_url; a nil client gets a default.
func NewSender(st delivery.Store, client *http.Client) *Sender {
	return &Sender{HTTP: delivery.NewHTTP(Kind, st, client), dms: map[string]string{}}
}

// Send makes one attempt. What Discord refuses for good (no access, no
// such channel, a person who takes no DMs from the bot) fails at once; a
// rate limit waits what Discord says; the rest is retried. Each part
// carries a nonce Discord enforces, so a retry after a lost answer posts
// nothing twice.
func (s *Sender) Send(ctx context.Context, st domain.Stream, ev domain.Event, _ int) delivery.Outcome {
	cfg, sc, out := transport.Ready(ctx, setting, s.Store, st, ParseStreamConfig)
	if out.Failed() {
		return out
	}
	a := api{base: cfg.APIURL, token: cfg.BotToken, client: s.Client}
	parent, err := s.Parent(ctx, st.ID, ev.Message.InReplyTo)
	if err != nil {
		return delivery.Outcome{Err: err}
	}
	p := post{event: ev.ID, content: ev.Message.Body}
	if sc.User != "" {
		err = s.toDM(ctx, a, sc.User, parent, &p)
	} else {
		err = s.toChannel(ctx, a, sc.Channel, ev.Message, parent, &p)
	}
	return outcome(p.id, err)
}

// remote is where a stored message was on Discord.
type remote struct {
	ChannelID string `json:"channel_id"`
	MessageID string `json:"message_id"`
}

func remoteOf(ev *domain.Event) remote {
	var r remote
	if ev != nil {
		json.Unmarshal(ev.Message.Extra, &r)
	}
	return r
}

// toDM posts in the person's DM with the bot, as a reply to the message
// answered when it was there.
func (s *Sender) toDM(ctx context.Context, a api, user string, parent *domain.Event, p *post) error {
	ch, err := s.dm(ctx, a, user)
	if err != nil {
		return err
	}
	if r := remoteOf(parent); r.ChannelID == ch {
		p.reply = r.MessageID
	}
	return p.send(ctx, a, ch)
}

// dm opens (or finds) the DM channel with user: POST /users/@me/channels.
func (s *Sender) dm(ctx context.Context, a api, user string) (string, error) {
	s.mu.Lock()
	ch, ok := s.dms[user]
	s.mu.Unlock()
	if ok {
		return ch, nil
	}
	var c channel
	if err := a.do(ctx, http.MethodPost, "/users/@me/channels", map[string]string{"recipient_id": user}, &c); err != nil {
		return "", fmt.Errorf("discord open DM with %s: %w", user, err)
	}
	s.mu.Lock()
	s.dms[user] = c.ID
	s.mu.Unlock()
	return c.ID, nil
}

// toChannel posts in the thread the message belongs to — the answered
// event's, else its threadId — starting it from its first message when
// it does not exist yet; with neither, in the channel itself.
func (s *Sender) toChannel(ctx context.Context, a api, ch string, m domain.Message, parent *domain.Event, p *post) error {
	thread := m.ThreadID
	if parent != nil {
		thread = parent.Message.ThreadID
	}
	r := remoteOf(parent)
	switch {
	case thread == "" || thread == ch:
		if r.ChannelID == ch {
			p.reply = r.MessageID
		}
		return p.send(ctx, a, ch)
	case r.ChannelID == ch && r.MessageID == thread:
		// The answered message is in the channel: its thread starts now.
		if err := startThread(ctx, a, ch, thread, threadName(parent, m)); err != nil {
			return err
		}
		return p.send(ctx, a, thread)
	}
	if r.ChannelID == thread {
		p.reply = r.MessageID
	}
	err := p.send(ctx, a, thread)
	if ae, ok := errors.AsType[*apiError](err); ok && ae.Code == codeUnknownChannel {
		if err := startThread(ctx, a, ch, thread, threadName(parent, m)); err != nil {
			return err
		}
		p.reply = ""
		return p.send(ctx, a, thread)
	}
	return err
}

// startThread makes a thread from message mid of channel ch (POST
// /channels/{ch}/messages/{mid}/threads); one already there is as good.
func startThread(ctx context.Context, a api, ch, mid, name string) error {
	err := a.do(ctx, http.MethodPost, "/channels/"+ch+"/messages/"+mid+"/threads", map[string]any{"name": name, "auto_archive_duration": 1440}, nil)
	if ae, ok := errors.AsType[*apiError](err); ok && ae.Code == codeThreadExists {
		return nil
	}
	if err != nil {
		return fmt.Errorf("discord start a thread from message %s: %w", mid, err)
	}
	return nil
}

// threadName is the first line of what started the thread, as Discord
// takes a name (1 to 100 characters).
func threadName(parent *domain.Event, m domain.Message) string {
	text := m.Subject
	if parent != nil {
		text = parent.Message.Body
	}
	line, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	if line = strings.TrimSpace(line); line == "" {
		line = "helix-org"
	}
	return cutRunes(line, 100)
}

// post is one message to send, in as many parts as it takes.
type post struct {
	event, content, reply string
	// id is the last part's id, once posted.
	id string
}

func (p *post) send(ctx context.Context, a api, ch string) error {
	parts := split(p.content, MaxContent)
	for i, part := range parts {
		body := map[string]any{"content": part, "nonce": nonce(p.event, i), "enforce_nonce": true,
			"allowed_mentions": map[string]any{"parse": []string{}}}
		if p.reply != "" && i == 0 {
			body["message_reference"] = map[string]any{"message_id": p.reply, "fail_if_not_exists": false}
		}
		var out struct {
			ID string `json:"id"`
		}
		if err := a.do(ctx, http.MethodPost, "/channels/"+ch+"/messages", body, &out); err != nil {
			return err
		}
		p.id = out.ID
	}
	return nil
}

// nonce identifies part i of an event's message to Discord (at most 25
// characters), so the same part is never posted twice.
func nonce(event string, i int) string {
	sum := sha256.Sum256([]byte(event + "/" + strconv.Itoa(i)))
	return hex.EncodeToString(sum[:])[:25]
}

// split cuts text into parts of at most n characters, at a line break
// when one is in the second half of a part.
func split(text string, n int) []string {
	var parts []string
	for utf8.RuneCountInString(text) > n {
		cut := cutRunes(text, n)
		if i := strings.LastIndex(cut, "\n"); i > len(cut)/2 {
			cut = cut[:i+1]
		}
		parts = append(parts, cut)
		text = text[len(cut):]
	}
	return append(parts, text)
}

func cutRunes(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// outcome maps a post's result for the delivery engine.
func outcome(id string, err error) delivery.Outcome {
	if err == nil {
		return delivery.Outcome{Status: http.StatusOK, RemoteID: id}
	}
	out := delivery.Outcome{Err: fmt.Errorf("discord: %w", err)}
	ae, ok := errors.AsType[*apiError](err)
	if !ok {
		return out
	}
	out.Status, out.RetryAfter = ae.Status, ae.RetryAfter
	// 400 a body Discord refuses (50007: the person takes no DMs from the
	// bot), 401 a bad token, 403 no access, 404 no such channel.
	out.Permanent = ae.Status >= 400 && ae.Status < 500 && ae.Status != http.StatusTooManyRequests && ae.Status != http.StatusRequestTimeout
	return out
}
