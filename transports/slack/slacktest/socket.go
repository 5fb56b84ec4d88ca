package slacktest

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// socketState is the fake's Socket Mode side.
type socketState struct {
	appToken  string
	conn      *websocket.Conn
	opens     int
	nextEnv   int
	unacked   []envelope
	acked     []string
	connected chan struct{}
	acks      chan string
}

type envelope struct {
	id      string
	payload json.RawMessage
	attempt int
}

// SocketMode lets the app connect with the app-level token appToken.
func (s *Server) SocketMode(appToken string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.socket.appToken = appToken
	s.socket.connected = make(chan struct{})
	s.socket.acks = make(chan string, 100)
}

// connectionsOpen is apps.connections.open: a WebSocket URL for the app.
func (s *Server) connectionsOpen(w http.ResponseWriter, r *http.Request) {
	tok, _ := cutBearer(r.Header.Get("Authorization"))
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case tok == "":
		answer(w, http.StatusOK, map[string]any{"ok": false, "error": "not_authed"})
	case strings.HasPrefix(tok, "xoxb-"):
		answer(w, http.StatusOK, map[string]any{"ok": false, "error": "not_allowed_token_type"})
	case s.socket.appToken == "" || tok != s.socket.appToken:
		answer(w, http.StatusOK, map[string]any{"ok": false, "error": "invalid_auth"})
	default:
		s.socket.opens++
		u := "ws" + strings.TrimPrefix(s.base, "http") + "/link/?ticket=" + strconv.Itoa(s.socket.opens) + "&app_id=A0APP"
		answer(w, http.StatusOK, map[string]any{"ok": true, "url": u})
	}
}

// link is the Socket Mode WebSocket: hello, then the envelopes not yet
// acknowledged, then what Push sends; it records acknowledgements.
func (s *Server) link(w http.ResponseWriter, r *http.Request) {
	conn, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	defer conn.CloseNow()
	s.mu.Lock()
	if old := s.socket.conn; old != nil {
		old.CloseNow()
	}
	s.socket.conn = conn
	s.writeLocked(map[string]any{"type": "hello", "num_connections": 1,
		"debug_info":      map[string]any{"host": "applink-fake", "build_number": 1, "approximate_connection_time": 18060},
		"connection_info": map[string]any{"app_id": "A0APP"}})
	for i := range s.socket.unacked {
		s.socket.unacked[i].attempt++
		s.sendLocked(s.socket.unacked[i], "timeout")
	}
	select {
	case <-s.socket.connected:
	default:
		close(s.socket.connected)
	}
	s.mu.Unlock()
	defer s.gone(conn)
	for {
		_, data, err := conn.Read(r.Context())
		if err != nil {
			return
		}
		var ack struct {
			EnvelopeID string `json:"envelope_id"`
		}
		if json.Unmarshal(data, &ack) == nil && ack.EnvelopeID != "" {
			s.acknowledged(ack.EnvelopeID)
		}
	}
}

func (s *Server) gone(conn *websocket.Conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.socket.conn == conn {
		s.socket.conn = nil
		s.socket.connected = make(chan struct{})
	}
}

func (s *Server) acknowledged(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, e := range s.socket.unacked {
		if e.id == id {
			s.socket.unacked = append(s.socket.unacked[:i], s.socket.unacked[i+1:]...)
			s.socket.acked = append(s.socket.acked, id)
			s.socket.acks <- id
			return
		}
	}
}

func (s *Server) writeLocked(v any) {
	b, _ := json.Marshal(v)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s.socket.conn.Write(ctx, websocket.MessageText, b)
}

func (s *Server) sendLocked(e envelope, reason string) {
	if s.socket.conn == nil {
		return
	}
	s.writeLocked(map[string]any{"envelope_id": e.id, "payload": e.payload, "type": "events_api",
		"accepts_response_payload": false, "retry_attempt": e.attempt, "retry_reason": reason})
}

// Push sends an Events API payload (an event_callback) in an events_api
// envelope, now or on the next connection, and keeps resending it on each
// new connection until it is acknowledged. It returns the envelope_id.
func (s *Server) Push(payload []byte) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.socket.nextEnv++
	e := envelope{id: "env-" + strconv.Itoa(s.socket.nextEnv), payload: payload}
	s.socket.unacked = append(s.socket.unacked, e)
	s.sendLocked(e, "")
	return e.id
}

// Redeliver resends every unacknowledged envelope on the connection, as
// Slack does when an acknowledgement is late.
func (s *Server) Redeliver() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.socket.unacked {
		s.socket.unacked[i].attempt++
		s.sendLocked(s.socket.unacked[i], "timeout")
	}
}

// Disconnect sends a disconnect message (reason refresh_requested,
// warning or link_disabled), as Slack does before it drops a connection.
func (s *Server) Disconnect(reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.socket.conn != nil {
		s.writeLocked(map[string]any{"type": "disconnect", "reason": reason, "debug_info": map[string]any{"host": "applink-fake"}})
	}
}

// SocketConnected is closed once a Socket Mode connection said hello; it
// is renewed when that connection ends.
func (s *Server) SocketConnected() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.socket.connected
}

// Opens counts apps.connections.open calls that gave a URL.
func (s *Server) Opens() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.socket.opens
}

// Unacked lists the envelopes not acknowledged yet.
func (s *Server) Unacked() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []string
	for _, e := range s.socket.unacked {
		ids = append(ids, e.id)
	}
	return ids
}

// NextAck waits for the next acknowledgement.
func (s *Server) NextAck(t testing.TB) string {
	t.Helper()
	s.mu.Lock()
	acks := s.socket.acks
	s.mu.Unlock()
	select {
	case id := <-acks:
		return id
	case <-time.After(30 * time.Second):
		t.Fatal("no envelope acknowledged within 30s")
		return ""
	}
}

// FromSample fills a Slack Events API sample (such as the java-slack-sdk
// shape samples, all values blank) with m: the envelope's type, ids and
// authorizations, the event's channel, user, text and timestamps.
func FromSample(sample []byte, m Message) []byte {
	var env map[string]any
	if err := json.Unmarshal(sample, &env); err != nil {
		panic("slacktest: sample is not JSON: " + err.Error())
	}
	ev, _ := env["event"].(map[string]any)
	kind := m.ChannelType
	if kind == "" {
		kind = "channel"
		if strings.HasPrefix(m.Channel, "D") {
			kind = "im"
		}
	}
	for k, v := range map[string]any{"channel": m.Channel, "user": m.User, "text": m.Text, "ts": m.TS, "event_ts": m.TS,
		"thread_ts": m.ThreadTS, "channel_type": kind, "team": "T0TEAM", "bot_id": m.BotID} {
		if _, ok := ev[k]; ok || v != "" {
			ev[k] = v
		}
	}
	if m.ThreadTS == "" {
		delete(ev, "thread_ts")
		delete(ev, "parent_user_id")
	}
	if m.BotID == "" {
		delete(ev, "bot_id")
		delete(ev, "bot_profile")
	}
	delete(ev, "edited")
	env["type"], env["event_id"], env["team_id"], env["api_app_id"], env["event_time"] = "event_callback", m.EventID, "T0TEAM", "A0APP", 1712345678
	env["authorizations"] = []map[string]any{{"team_id": "T0TEAM", "user_id": m.BotUser, "is_bot": m.BotUser != "", "is_enterprise_install": false}}
	b, _ := json.Marshal(env)
	return b
}
