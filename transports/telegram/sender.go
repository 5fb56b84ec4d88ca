package telegram

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/transports/delivery"
	"github.com/helixml/helix-org/transports/transport"
)

// Sender sends what workers publish on telegram streams with sendMessage.
type Sender struct{ delivery.HTTP }

// NewSender returns the sender; redirects are never followed (the token
// is in the URL). A nil client gets a default.
func NewSender(st delivery.Store, client *http.Client) *Sender {
	return &Sender{delivery.NewHTTP(Kind, st, client)}
}

// Send makes one attempt: a message Telegram rejects (400, 403) fails at
// once; a rate limit waits retry_after; the rest is retried.
func (s *Sender) Send(ctx context.Context, st domain.Stream, ev domain.Event, _ int) delivery.Outcome {
	cfg, sc, out := transport.Ready(ctx, setting, s.Store, st, ParseStreamConfig)
	if out.Failed() {
		return out
	}
	chat, _ := strconv.ParseInt(sc.ChatID, 10, 64)
	m := sendMessage{ChatID: chat, Text: ev.Message.Body, MessageThreadID: sc.MessageThreadID}
	if err := s.reply(ctx, st.ID, ev.Message, &m); err != nil {
		return delivery.Outcome{Err: err}
	}
	return s.post(ctx, cfg, m)
}

type sendMessage struct {
	ChatID           int64  `json:"chat_id"`
	Text             string `json:"text"`
	MessageThreadID  int64  `json:"message_thread_id,omitempty"`
	ReplyToMessageID int64  `json:"reply_to_message_id,omitempty"`
}

// reply points the message at what it answers: inReplyTo an event on the
// stream (a message_id of it) or a message_id itself, and that message's
// topic.
func (s *Sender) reply(ctx context.Context, stream string, msg domain.Message, m *sendMessage) error {
	ref, thread := msg.InReplyTo, msg.ThreadID
	if ref != "" {
		if parent, err := s.Store.GetEvent(ctx, ref); err == nil && parent.StreamID == stream {
			ref, thread = parent.Message.MessageID, parent.Message.ThreadID
		} else if err != nil && !errors.Is(err, domain.ErrNotFound) {
			return err
		}
		if id, err := strconv.ParseInt(ref, 10, 64); err == nil && id > 0 {
			m.ReplyToMessageID = id
		}
	}
	if topic, ok := strings.CutPrefix(thread, "topic:"); ok {
		if id, err := strconv.ParseInt(topic, 10, 64); err == nil {
			m.MessageThreadID = id
		}
	}
	return nil
}

// answer is Telegram's reply envelope.
type answer struct {
	OK          bool   `json:"ok"`
	Description string `json:"description"`
	Parameters  struct {
		RetryAfter int `json:"retry_after"`
	} `json:"parameters"`
	Result struct {
		MessageID int64 `json:"message_id"`
	} `json:"result"`
}

func (s *Sender) post(ctx context.Context, cfg Config, m sendMessage) delivery.Outcome {
	var ans answer
	resp, out := delivery.Do(ctx, s.Client, delivery.Call{Name: "telegram sendMessage", URL: strings.TrimRight(cfg.APIURL, "/") + "/bot" + cfg.BotToken + "/sendMessage",
		Body: m, Secret: cfg.BotToken}, &ans)
	switch {
	case resp == nil:
		return out
	case resp.StatusCode == http.StatusOK && ans.OK:
		if ans.Result.MessageID > 0 {
			out.RemoteID = strconv.FormatInt(ans.Result.MessageID, 10)
		}
		return out
	case resp.StatusCode == http.StatusTooManyRequests:
		out.RetryAfter = time.Duration(ans.Parameters.RetryAfter) * time.Second
	case resp.StatusCode == http.StatusBadRequest, resp.StatusCode == http.StatusForbidden:
		out.Permanent = true
	}
	out.Err = fmt.Errorf("telegram sendMessage answered %d: %s", resp.StatusCode, ans.Description)
	return out
}
