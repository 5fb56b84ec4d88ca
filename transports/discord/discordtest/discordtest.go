// Package discordtest fakes Discord for tests, on loopback, speaking its
// documented wire formats. The Gateway is a real WebSocket server: op 10
// Hello with heartbeat_interval, op 2 Identify (the token and intents
// checked: without MESSAGE_CONTENT it closes 4014, a wrong token 4004),
// op 1 heartbeats answered by op 11, op 0 Dispatch of READY, RESUMED,
// MESSAGE_CREATE and THREAD_CREATE with sequence numbers, op 6 Resume
// (the events after the client's seq replayed, or op 9 Invalid Session),
// op 7 Reconnect on request. The REST API (a bot token in Authorization)
// serves GET /gateway/bot, GET /channels/{id}, POST
// /channels/{id}/messages (message_reference, nonce with enforce_nonce,
// 2000 characters at most; the bot's own message dispatched back, as
// Discord does), POST /channels/{id}/messages/{mid}/threads (a thread has
// its starter message's id; a second one is 400 code 160004) and POST
// /users/@me/channels (a DM), with Discord's JSON errors (10003 Unknown
// Channel, 429 with retry_after).
package discordtest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/helixml/helix-org/transports/transport/transporttest"
)

// BotID is the fake bot's user id.
const BotID = "1100000000000000001"

// MessageContentIntent is the intent without which messages have no text.
const MessageContentIntent = 1 << 15

// Message is a message a person sends, or the bot posted.
type Message struct {
	ID, ChannelID, GuildID string
	AuthorID, Author       string
	Bot                    bool
	Content                string
	// ReplyTo is the message it replies to (message_reference).
	ReplyTo string
	// Nonce is what the poster gave, for enforce_nonce.
	Nonce string
}

// Identify is one op 2 the fake received.
type Identify struct {
	Token   string
	Intents int
}

// Resume is one op 6 the fake received.
type Resume struct {
	SessionID string
	Seq       int64
	// URL is the path the client resumed on.
	Path string
}

// Reply is a scripted answer to the next REST call that posts.
type Reply struct {
	Status     int
	Code       int
	RetryAfter float64
}

// Server is a fake Discord.
type Server struct {
	// URL is the REST API's base, as transport.discord's api_url takes it.
	URL   string
	token string
	// HeartbeatInterval is what Hello asks for, in milliseconds.
	HeartbeatInterval int

	// Replies are answered to the next REST calls that post (Script);
	// after them, calls succeed.
	transporttest.Replies[Reply]

	mu        sync.Mutex
	seq       int64
	nextID    int64
	session   string
	log       []event // the session's dispatches, for Resume
	conn      *websocket.Conn
	connected chan struct{}
	noAcks    int
	channels  map[string]chan_
	dms       map[string]string // user → DM channel
	messages  map[string]Message
	nonces    map[string]string
	identify  []Identify
	resumes   []Resume
	beats     []json.RawMessage
	posts     chan Message
	threads   chan chan_
}

// chan_ is a channel the fake knows: a guild text channel (type 0), a
// thread (11, with its parent) or a DM (1, with its person).
type chan_ struct {
	ID, GuildID, ParentID, Name, Recipient string
	Type                                   int
}

type event struct {
	s    int64
	t    string
	data any
}

// New starts a fake Discord whose bot has token, closed when the test ends.
func New(t testing.TB, token string) *Server {
	s := &Server{token: token, HeartbeatInterval: 45000, nextID: 1300000000000000000, channels: map[string]chan_{}, dms: map[string]string{},
		messages: map[string]Message{}, nonces: map[string]string{}, connected: make(chan struct{}), posts: make(chan Message, 100), threads: make(chan chan_, 100)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /gateway", s.gateway)
	mux.HandleFunc("GET /gateway-resume", s.gateway)
	mux.HandleFunc("GET /api/v10/gateway/bot", s.auth(s.gatewayBot))
	mux.HandleFunc("GET /api/v10/channels/{id}", s.auth(s.getChannel))
	mux.HandleFunc("POST /api/v10/channels/{id}/messages", s.auth(s.postMessage))
	mux.HandleFunc("POST /api/v10/channels/{id}/messages/{mid}/threads", s.auth(s.startThread))
	mux.HandleFunc("POST /api/v10/users/@me/channels", s.auth(s.openDM))
	srv := httptest.NewServer(mux)
	t.Cleanup(func() {
		s.mu.Lock()
		if s.conn != nil {
			s.conn.CloseNow()
		}
		s.mu.Unlock()
		srv.Close()
	})
	s.URL = srv.URL + "/api/v10"
	return s
}

func (s *Server) wsURL(path string) string {
	return "ws" + strings.TrimSuffix(strings.TrimPrefix(s.URL, "http"), "/api/v10") + path
}

// Channel makes a guild text channel exist.
func (s *Server) Channel(guild, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.channels[id] = chan_{ID: id, GuildID: guild, Type: 0, Name: "general"}
}

// Thread makes a thread of a channel exist, as a person started it.
func (s *Server) Thread(parent, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.channels[id] = chan_{ID: id, GuildID: s.channels[parent].GuildID, ParentID: parent, Type: 11, Name: "thread"}
}

// DMChannel is the DM channel of user with the bot, made on first use.
func (s *Server) DMChannel(user string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dmLocked(user)
}

func (s *Server) dmLocked(user string) string {
	if id, ok := s.dms[user]; ok {
		return id
	}
	id := s.newIDLocked()
	s.dms[user] = id
	s.channels[id] = chan_{ID: id, Type: 1, Recipient: user}
	return id
}

func (s *Server) newIDLocked() string {
	s.nextID++
	return strconv.FormatInt(s.nextID, 10)
}

// Send has a person send m (its ID made up when empty), dispatched as
// MESSAGE_CREATE to the session, or kept for its Resume when no client is
// connected. It returns the message's id.
func (s *Server) Send(m Message) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m.ID == "" {
		m.ID = s.newIDLocked()
	}
	if c, ok := s.channels[m.ChannelID]; ok && m.GuildID == "" {
		m.GuildID = c.GuildID
	}
	s.messages[m.ID] = m
	s.dispatchLocked("MESSAGE_CREATE", m.object())
	return m.ID
}

// object is the message as Discord's JSON shows it.
func (m Message) object() map[string]any {
	o := map[string]any{"id": m.ID, "channel_id": m.ChannelID, "type": 0, "content": m.Content, "tts": false,
		"timestamp": "2026-11-23T10:00:00.000000+00:00", "edited_timestamp": nil, "mention_everyone": false,
		"mentions": []any{}, "mention_roles": []any{}, "attachments": []any{}, "embeds": []any{}, "pinned": false, "flags": 0,
		"author": map[string]any{"id": m.AuthorID, "username": m.Author, "global_name": m.Author, "discriminator": "0", "avatar": nil, "bot": m.Bot}}
	if m.GuildID != "" {
		o["guild_id"] = m.GuildID
	}
	if m.Nonce != "" {
		o["nonce"] = m.Nonce
	}
	if m.ReplyTo != "" {
		o["type"] = 19
		o["message_reference"] = map[string]any{"type": 0, "message_id": m.ReplyTo, "channel_id": m.ChannelID}
	}
	return o
}

func (s *Server) dispatchLocked(t string, d any) {
	s.seq++
	e := event{s: s.seq, t: t, data: d}
	s.log = append(s.log, e)
	if s.conn != nil {
		s.writeLocked(map[string]any{"op": 0, "s": e.s, "t": e.t, "d": e.data})
	}
}

func (s *Server) writeLocked(v any) {
	b, _ := json.Marshal(v)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s.conn.Write(ctx, websocket.MessageText, b)
}

// Reconnect sends op 7: the client should resume on a new connection.
func (s *Server) Reconnect() { s.op(7, nil) }

// InvalidSession sends op 9.
func (s *Server) InvalidSession(resumable bool) {
	if !resumable {
		s.mu.Lock()
		s.session = ""
		s.mu.Unlock()
	}
	s.op(9, resumable)
}

func (s *Server) op(op int, d any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn != nil {
		s.writeLocked(map[string]any{"op": op, "d": d})
	}
}

// Drop cuts the connection without a close frame, as a network does.
func (s *Server) Drop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn != nil {
		s.conn.CloseNow()
		s.conn = nil
	}
}

// SkipAcks leaves the next n heartbeats unanswered.
func (s *Server) SkipAcks(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.noAcks = n
}

// Identifies returns every Identify so far.
func (s *Server) Identifies() []Identify {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Identify(nil), s.identify...)
}

// Resumes returns every Resume so far.
func (s *Server) Resumes() []Resume {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Resume(nil), s.resumes...)
}

// Heartbeats returns the d of every heartbeat so far (the client's seq).
func (s *Server) Heartbeats() []json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]json.RawMessage(nil), s.beats...)
}

// Connected is closed once a session is ready or resumed; it is renewed
// when that connection ends.
func (s *Server) Connected() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.connected
}

// NextPost waits for the bot's next message.
func (s *Server) NextPost(t testing.TB) Message {
	t.Helper()
	select {
	case m := <-s.posts:
		return m
	case <-time.After(30 * time.Second):
		t.Fatal("the bot posted nothing within 30s")
		return Message{}
	}
}

// NextThread waits for the next thread the bot starts.
func (s *Server) NextThread(t testing.TB) (id, parent, name string) {
	t.Helper()
	select {
	case c := <-s.threads:
		return c.ID, c.ParentID, c.Name
	case <-time.After(30 * time.Second):
		t.Fatal("the bot started no thread within 30s")
		return "", "", ""
	}
}
