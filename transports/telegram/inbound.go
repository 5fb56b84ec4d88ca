package telegram

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/transports/inbound"
	"github.com/helixml/helix-org/transports/transport"
)

// Pattern is the route setWebhook points at.
const Pattern = "POST /telegram/webhook"

// HeaderSecret carries setWebhook's secret_token on every update.
const HeaderSecret = "X-Telegram-Bot-Api-Secret-Token"

// Endpoint receives the bot's updates: 401 without the secret token (or
// none configured), before the body is read; 200 once a message is stored
// (or was: a redelivery); 202 when there is nothing to store (another
// kind of update, a bot's message, a chat no stream follows).
func Endpoint(st transport.Store) inbound.Endpoint {
	return inbound.Endpoint{Pattern: Pattern, Kind: Kind, MaxBody: MaxBodySetting,
		Check: func(r *http.Request) (inbound.Request, error) {
			cfg, err := setting.Load(r.Context(), st)
			if err != nil {
				return inbound.Request{}, err
			}
			if err := authorize(cfg, r.Header.Get(HeaderSecret)); err != nil {
				return inbound.Request{}, err
			}
			return inbound.Request{Parse: func(body []byte) (inbound.Batch, error) { return parse(r.Context(), st, body) }}, nil
		}}
}

// authorize compares the header with secret_token in constant time.
func authorize(cfg Config, got string) error {
	if cfg.SecretToken == "" {
		return inbound.Unauthorized("", "transport.telegram has no secret_token: updates are refused until it is set (and given to setWebhook)")
	}
	if got == "" {
		return inbound.Unauthorized("", "missing %s header; the body was not read", HeaderSecret)
	}
	a, b := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(cfg.SecretToken))
	if subtle.ConstantTimeCompare(a[:], b[:]) != 1 {
		return inbound.Unauthorized("", "wrong %s", HeaderSecret)
	}
	return nil
}

// update is the part of a Telegram Update the endpoint reads.
type update struct {
	UpdateID    int64    `json:"update_id"`
	Message     *message `json:"message"`
	ChannelPost *message `json:"channel_post"`
}

type message struct {
	MessageID       int64  `json:"message_id"`
	MessageThreadID int64  `json:"message_thread_id"`
	Date            int64  `json:"date"`
	Text            string `json:"text"`
	Caption         string `json:"caption"`
	From            *struct {
		ID        int64  `json:"id"`
		IsBot     bool   `json:"is_bot"`
		Username  string `json:"username"`
		FirstName string `json:"first_name"`
	} `json:"from"`
	Chat struct {
		ID    int64  `json:"id"`
		Type  string `json:"type"`
		Title string `json:"title"`
	} `json:"chat"`
	ReplyTo *struct {
		MessageID int64 `json:"message_id"`
	} `json:"reply_to_message"`
}

func parse(ctx context.Context, st transport.Store, body []byte) (inbound.Batch, error) {
	var u update
	if err := json.Unmarshal(body, &u); err != nil {
		return inbound.Batch{}, domain.Invalid("body", "is not a Telegram Update: %v", err)
	}
	if u.UpdateID == 0 {
		return inbound.Batch{}, domain.Required("update_id")
	}
	m := u.Message
	if m == nil {
		m = u.ChannelPost
	}
	switch {
	case m == nil:
		return inbound.Batch{Note: "only new messages and channel posts are stored"}, nil
	case m.From != nil && m.From.IsBot:
		return inbound.Batch{Note: "a bot's message is not stored"}, nil
	case strings.TrimSpace(m.Text+m.Caption) == "":
		return inbound.Batch{Note: "a message without text is not stored"}, nil
	}
	streams, err := st.ListStreams(ctx, Kind)
	if err != nil {
		return inbound.Batch{}, err
	}
	msg := envelope(u.UpdateID, m)
	var b inbound.Batch
	for _, s := range streams {
		if follows(s, m) {
			b.Messages = append(b.Messages, domain.Inbound{StreamID: s.ID, Message: msg, Key: strconv.FormatInt(u.UpdateID, 10), Sender: sender(m)})
		}
	}
	if len(b.Messages) == 0 {
		b.Note = fmt.Sprintf("no telegram stream follows chat %d", m.Chat.ID)
	}
	return b, nil
}

// sender vouches for the user Telegram says wrote the message (the
// request carried the webhook's secret token): their id, which is also
// the chat_id of their private chat with the bot. In a group the chat's
// id is not any user's, so a contact there is never vouched for.
func sender(m *message) domain.Sender {
	if m.From == nil || m.From.IsBot || m.From.ID == 0 {
		return domain.Sender{}
	}
	return domain.Sender{Address: strconv.FormatInt(m.From.ID, 10), How: "telegram-user"}
}

// follows reports whether a stream takes messages of this chat (and of
// its topic, when the stream is narrowed to one).
func follows(s domain.Stream, m *message) bool {
	var c StreamConfig
	if json.Unmarshal(s.Transport.Config, &c) != nil || c.ChatID != strconv.FormatInt(m.Chat.ID, 10) {
		return false
	}
	return c.MessageThreadID == 0 || c.MessageThreadID == m.MessageThreadID
}

// envelope is a chat message as a Message: messageId the message_id, the
// thread the topic (or the message replied to, or the message itself), so
// a worker's answer is sent as a reply in the same topic.
func envelope(updateID int64, m *message) domain.Message {
	text := m.Text
	if text == "" {
		text = m.Caption
	}
	out := domain.Message{Body: text, BodyContentType: "text/plain", MessageID: strconv.FormatInt(m.MessageID, 10)}
	if m.From != nil {
		out.From = m.From.Username
		if out.From == "" {
			out.From = "tg:" + strconv.FormatInt(m.From.ID, 10)
		}
	}
	switch {
	case m.MessageThreadID != 0:
		out.ThreadID = "topic:" + strconv.FormatInt(m.MessageThreadID, 10)
	case m.ReplyTo != nil:
		out.ThreadID = strconv.FormatInt(m.ReplyTo.MessageID, 10)
	default:
		out.ThreadID = out.MessageID
	}
	if m.ReplyTo != nil {
		out.InReplyTo = strconv.FormatInt(m.ReplyTo.MessageID, 10)
	}
	out.Extra, _ = json.Marshal(map[string]any{"update_id": updateID, "chat_id": m.Chat.ID, "chat_type": m.Chat.Type,
		"chat_title": m.Chat.Title, "message_id": m.MessageID, "message_thread_id": m.MessageThreadID, "date": m.Date})
	return out
}
