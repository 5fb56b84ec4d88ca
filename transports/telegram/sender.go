package telegram

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/transports/delivery"
)

// SendTimeout cuts off one attempt to reach Telegram.
const SendTimeout = 30 * time.Second

// SenderStore is what the Sender reads.
type SenderStore interface {
	SettingOr(ctx context.Context, spec domain.SettingSpec) (string, error)
	GetEvent(ctx context.Context, id string) (domain.Event, error)
}

// Sender sends what workers publish on telegram streams with sendMessage.
type Sender struct {
	store  SenderStore
	client *http.Client
}

var _ delivery.Sender = (*Sender)(nil)

// NewSender returns the sender; redirects are never followed (the token
// is in the URL). A nil client gets a default.
func NewSender(st SenderStore, client *http.Client) *Sender {
	return &Sender{store: st, client: delivery.NoRedirects(client)}
}

// Kind is telegram.
func (s *Sender) Kind() domain.TransportKind { return Kind }

// Wants every telegram stream.
func (s *Sender) Wants(st domain.Stream) bool { return st.Transport.Kind == Kind }

// Send makes one attempt: a message Telegram rejects (400, 403) fails at
// once; a rate limit waits retry_after; the rest is retried.
func (s *Sender) Send(ctx context.Context, st domain.Stream, ev domain.Event, _ int) delivery.Outcome {
	cfg, err := loadConfig(ctx, s.store)
	if err != nil {
		return delivery.Outcome{Err: err}
	}
	if cfg.BotToken == "" {
		return delivery.Outcome{Err: errors.New("transport.telegram has no bot_token: messages wait until it is set")}
	}
	sc, err := ParseStreamConfig(st.Transport.Config)
	if err != nil {
		return delivery.Outcome{Err: fmt.Errorf("stream %s: %w", st.ID, err), Permanent: true}
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
		if parent, err := s.store.GetEvent(ctx, ref); err == nil && parent.StreamID == stream {
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
	ctx, cancel := context.WithTimeout(ctx, SendTimeout)
	defer cancel()
	body, _ := json.Marshal(m)
	endpoint := strings.TrimRight(cfg.APIURL, "/") + "/bot" + cfg.BotToken + "/sendMessage"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return delivery.Outcome{Err: errors.New("transport.telegram api_url is not usable")}
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		// The URL holds the bot token: keep only what went wrong.
		if ue, ok := errors.AsType[*url.Error](err); ok {
			err = ue.Err
		}
		return delivery.Outcome{Err: fmt.Errorf("telegram sendMessage: %s", strings.ReplaceAll(err.Error(), cfg.BotToken, "<bot_token>"))}
	}
	defer resp.Body.Close()
	var ans answer
	json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&ans)
	out := delivery.Outcome{Status: resp.StatusCode}
	switch {
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
