// Package telegramtest fakes Telegram for tests, on loopback, speaking the
// Bot API's documented wire format: sendMessage at /bot<token>/sendMessage
// (JSON in, {"ok":…,"result"|"description"} out, 404 for an unknown
// token, 429 with parameters.retry_after), and the Update JSON Telegram
// POSTs to a bot's webhook with its secret token.
package telegramtest

import (
	"cmp"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/helixml/helix-org/transports/transport/transporttest"
	"time"
)

// Sent is one sendMessage call the fake received.
type Sent struct {
	ChatID           int64  `json:"chat_id"`
	Text             string `json:"text"`
	MessageThreadID  int64  `json:"message_thread_id"`
	ReplyToMessageID int64  `json:"reply_to_message_id"`
	// MessageID is the id the fake gave the message, when it accepted it.
	MessageID int64 `json:"-"`
}

// Reply is a scripted answer to the next call.
type Reply struct {
	Status      int
	Description string
	RetryAfter  int
}

// Server is a fake Bot API for one bot.
type Server struct {
	URL   string
	token string

	transporttest.Replies[Reply]
	sent transporttest.Calls[Sent]

	mu   sync.Mutex
	next int64
}

// New starts a fake serving the bot with token.
func New(t testing.TB, token string) *Server {
	s := &Server{token: token, next: 500}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// Next waits for the next sendMessage.
func (s *Server) Next(t testing.TB) Sent {
	t.Helper()
	return s.sent.Next(t, "sendMessage")
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	token, method, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/bot"), "/")
	if !ok || token != s.token || r.Method != http.MethodPost {
		answer(w, http.StatusNotFound, map[string]any{"ok": false, "error_code": 404, "description": "Not Found"})
		return
	}
	if method != "sendMessage" {
		answer(w, http.StatusNotFound, map[string]any{"ok": false, "error_code": 404, "description": "Not Found: method not found"})
		return
	}
	var m Sent
	if err := json.NewDecoder(r.Body).Decode(&m); err != nil || m.ChatID == 0 {
		answer(w, http.StatusBadRequest, map[string]any{"ok": false, "error_code": 400, "description": "Bad Request: chat_id is empty"})
		return
	}
	rep := s.Take()
	s.mu.Lock()
	s.next++
	id := s.next
	s.mu.Unlock()
	if rep == nil && m.Text != "" {
		m.MessageID = id
	}
	s.sent.Add(m)
	switch {
	case rep != nil:
		body := map[string]any{"ok": false, "error_code": rep.Status, "description": rep.Description}
		if rep.RetryAfter > 0 {
			body["parameters"] = map[string]any{"retry_after": rep.RetryAfter}
		}
		answer(w, rep.Status, body)
	case m.Text == "":
		answer(w, http.StatusBadRequest, map[string]any{"ok": false, "error_code": 400, "description": "Bad Request: message text is empty"})
	default:
		answer(w, http.StatusOK, map[string]any{"ok": true, "result": map[string]any{"message_id": id, "chat": map[string]any{"id": m.ChatID},
			"date": time.Now().Unix(), "text": m.Text, "from": map[string]any{"id": 1, "is_bot": true, "username": "helix_bot"}}})
	}
}

func answer(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

// Message is a chat message to deliver as an update.
type Message struct {
	UpdateID  int64
	MessageID int64
	ChatID    int64
	Topic     int64 // message_thread_id of a forum topic
	ReplyTo   int64
	From      string
	IsBot     bool
	Text      string
	// FromID is the sender's user id. Zero: as Telegram does, the chat's
	// id in a private chat (a positive ChatID), else 4242.
	FromID int64
}

// JSON is the Update Telegram POSTs for the message.
func (m Message) JSON() []byte {
	from, chat := m.FromID, map[string]any{"id": m.ChatID, "type": "supergroup", "title": "Team"}
	if m.ChatID > 0 {
		// A private chat's id is its user's.
		chat = map[string]any{"id": m.ChatID, "type": "private", "first_name": m.From, "username": m.From}
		from = cmp.Or(from, m.ChatID)
	}
	msg := map[string]any{"message_id": m.MessageID, "date": 1712345678, "text": m.Text,
		"from": map[string]any{"id": cmp.Or(from, 4242), "is_bot": m.IsBot, "first_name": m.From, "username": m.From},
		"chat": chat}
	if m.Topic != 0 {
		msg["message_thread_id"], msg["is_topic_message"] = m.Topic, true
	}
	if m.ReplyTo != 0 {
		msg["reply_to_message"] = map[string]any{"message_id": m.ReplyTo, "date": 1712345600, "chat": msg["chat"]}
	}
	b, _ := json.Marshal(map[string]any{"update_id": m.UpdateID, "message": msg})
	return b
}

// Headers are what Telegram sends with an update, with secret as the
// webhook's secret token.
func Headers(secret string) http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	if secret != "" {
		h.Set("X-Telegram-Bot-Api-Secret-Token", secret)
	}
	return h
}
