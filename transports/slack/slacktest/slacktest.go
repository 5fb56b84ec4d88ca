// Package slacktest fakes Slack for tests, on loopback, speaking the
// documented wire formats: the Web API's chat.postMessage (a bot token in
// Authorization, JSON in, {"ok":…} out, errors such as channel_not_found
// and 429 with Retry-After), the Events API requests Slack sends an app,
// signed as Slack signs them, Socket Mode (apps.connections.open with an
// app-level token, then a WebSocket: hello, events_api envelopes each
// resent until acknowledged with its envelope_id, disconnect) and the
// OAuth v2 install (the authorize page approving at once, oauth.v2.access
// exchanging the code for a bot token).
package slacktest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/helixml/helix-org/transports/transport/transporttest"
)

// Post is one chat.postMessage call the fake received.
type Post struct {
	Token    string `json:"-"`
	Channel  string `json:"channel"`
	Text     string `json:"text"`
	ThreadTS string `json:"thread_ts"`
	// TS is the ts the fake gave the message, when it accepted it.
	TS string `json:"-"`
}

// Reply is a scripted answer to the next call.
type Reply struct {
	Status     int
	Error      string // {"ok":false,"error":…} when set
	RetryAfter int
}

// Server is a fake Slack Web API.
type Server struct {
	URL   string
	token string
	base  string

	transporttest.Replies[Reply]
	posts transporttest.Calls[Post]

	mu  sync.Mutex
	seq int

	socket socketState
	oauth  oauthApp
}

// New starts a fake that accepts the bot token token.
func New(t testing.TB, token string) *Server {
	s := &Server{token: token}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/chat.postMessage", s.postMessage)
	mux.HandleFunc("POST /api/apps.connections.open", s.connectionsOpen)
	mux.HandleFunc("GET /link/", s.link)
	mux.HandleFunc("GET /oauth/v2/authorize", s.authorize)
	mux.HandleFunc("POST /api/oauth.v2.access", s.access)
	srv := httptest.NewServer(mux)
	t.Cleanup(func() {
		s.mu.Lock()
		if s.socket.conn != nil {
			s.socket.conn.CloseNow()
		}
		s.mu.Unlock()
		srv.Close()
	})
	s.URL = srv.URL + "/api"
	s.base = srv.URL
	return s
}

// Posts returns every call so far.
func (s *Server) Posts() []Post { return s.posts.All() }

// Next waits for the next call.
func (s *Server) Next(t testing.TB) Post {
	t.Helper()
	return s.posts.Next(t, "chat.postMessage call")
}

func (s *Server) postMessage(w http.ResponseWriter, r *http.Request) {
	var p Post
	p.Token, _ = cutBearer(r.Header.Get("Authorization"))
	if err := json.NewDecoder(r.Body).Decode(&p); err != nil {
		answer(w, http.StatusOK, map[string]any{"ok": false, "error": "invalid_json"})
		return
	}
	rep := s.Take()
	s.mu.Lock()
	s.seq++
	ts := fmt.Sprintf("1712345999.%06d", s.seq)
	s.mu.Unlock()
	if rep == nil && p.Token == s.token && p.Text != "" {
		p.TS = ts
	}
	s.posts.Add(p)
	switch {
	case p.Token != s.token:
		answer(w, http.StatusOK, map[string]any{"ok": false, "error": "invalid_auth"})
	case rep != nil && rep.Status == http.StatusTooManyRequests:
		w.Header().Set("Retry-After", strconv.Itoa(rep.RetryAfter))
		answer(w, http.StatusTooManyRequests, map[string]any{"ok": false, "error": "ratelimited"})
	case rep != nil:
		answer(w, max(rep.Status, http.StatusOK), map[string]any{"ok": false, "error": rep.Error})
	case p.Text == "":
		answer(w, http.StatusOK, map[string]any{"ok": false, "error": "no_text"})
	default:
		answer(w, http.StatusOK, map[string]any{"ok": true, "channel": p.Channel, "ts": ts,
			"message": map[string]any{"text": p.Text, "ts": ts, "thread_ts": p.ThreadTS, "bot_id": "B0BOT"}})
	}
}

func cutBearer(h string) (string, bool) {
	const p = "Bearer "
	if len(h) < len(p) || h[:len(p)] != p {
		return "", false
	}
	return h[len(p):], true
}

func answer(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

// Message is a message event to send an app.
type Message struct {
	EventID  string
	Channel  string
	User     string
	Text     string
	TS       string
	ThreadTS string
	BotID    string
	Subtype  string
	// BotUser is the installation's bot user, sent in authorizations.
	BotUser string
	// ChannelType is the event's channel_type; empty, it is what Slack
	// sends for the channel: "im" for a D… channel (a DM with the bot),
	// "channel" otherwise.
	ChannelType string
}

// JSON is the event_callback envelope Slack POSTs for the message.
func (m Message) JSON() []byte {
	kind := m.ChannelType
	if kind == "" {
		kind = "channel"
		if strings.HasPrefix(m.Channel, "D") {
			kind = "im"
		}
	}
	ev := map[string]any{"type": "message", "channel": m.Channel, "user": m.User, "text": m.Text, "ts": m.TS,
		"channel_type": kind, "event_ts": m.TS}
	if m.ThreadTS != "" {
		ev["thread_ts"] = m.ThreadTS
	}
	if m.BotID != "" {
		ev["bot_id"] = m.BotID
	}
	if m.Subtype != "" {
		ev["subtype"] = m.Subtype
	}
	env := map[string]any{"token": "legacy-verification-token", "team_id": "T0TEAM", "api_app_id": "A0APP",
		"event": ev, "type": "event_callback", "event_id": m.EventID, "event_time": 1712345678}
	if m.BotUser != "" {
		env["authorizations"] = []map[string]any{{"team_id": "T0TEAM", "user_id": m.BotUser, "is_bot": true}}
	}
	b, _ := json.Marshal(env)
	return b
}

// URLVerification is the body of Slack's URL check.
func URLVerification(challenge string) []byte {
	b, _ := json.Marshal(map[string]string{"token": "legacy-verification-token", "challenge": challenge, "type": "url_verification"})
	return b
}

// Headers signs body as Slack does, at time at, with the signing secret.
func Headers(secret string, at time.Time, body []byte) http.Header {
	ts := strconv.FormatInt(at.Unix(), 10)
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("X-Slack-Request-Timestamp", ts)
	h.Set("X-Slack-Signature", Signature(secret, ts, body))
	return h
}

// Signature is X-Slack-Signature for body with the timestamp header ts,
// written from Slack's "Verifying requests from Slack" and sharing no
// code with package slack: "v0=" + the hex HMAC-SHA256, under the signing
// secret, of "v0:" + ts + ":" + body.
func Signature(secret, ts string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte("v0:" + ts + ":"))
	mac.Write(body)
	return "v0=" + hex.EncodeToString(mac.Sum(nil))
}

// Verify is that page's check, step by step: the timestamp within five
// minutes of now, and Signature compared with X-Slack-Signature as sent.
func Verify(secret string, h http.Header, body []byte, now time.Time) error {
	ts, sig := h.Get("X-Slack-Request-Timestamp"), h.Get("X-Slack-Signature")
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return errors.New("no timestamp")
	}
	if sec < now.Unix()-300 || sec > now.Unix()+300 {
		return errors.New("stale timestamp")
	}
	if !hmac.Equal([]byte(Signature(secret, ts, body)), []byte(sig)) {
		return errors.New("signature mismatch")
	}
	return nil
}
