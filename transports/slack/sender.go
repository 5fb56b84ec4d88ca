package slack

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/transports/delivery"
)

// SendTimeout cuts off one attempt to reach Slack.
const SendTimeout = 30 * time.Second

// SenderStore is what the Sender reads.
type SenderStore interface {
	SettingOr(ctx context.Context, spec domain.SettingSpec) (string, error)
	GetEvent(ctx context.Context, id string) (domain.Event, error)
	// LatestInbound finds the channel of a thread a worker's stream is in.
	LatestInbound(ctx context.Context, streamID, messageID, threadID string) (domain.Event, error)
}

// Sender posts what workers publish on slack streams with chat.postMessage.
type Sender struct {
	store  SenderStore
	client *http.Client
}

var _ delivery.Sender = (*Sender)(nil)

// NewSender returns the sender. Redirects are never followed, so the bot
// token only ever goes to api_url; a nil client gets a default.
func NewSender(st SenderStore, client *http.Client) *Sender {
	return &Sender{store: st, client: delivery.NoRedirects(client)}
}

// Kind is slack.
func (s *Sender) Kind() domain.TransportKind { return Kind }

// Wants every slack stream: what a worker publishes there is a message.
func (s *Sender) Wants(st domain.Stream) bool { return st.Transport.Kind == Kind }

// Send makes one attempt. What only the operator can fix (no bot token,
// Slack down) is retried; what Slack refuses for good (channel_not_found,
// not_in_channel, invalid_auth…) fails at once.
func (s *Sender) Send(ctx context.Context, st domain.Stream, ev domain.Event, _ int) delivery.Outcome {
	cfg, err := loadConfig(ctx, s.store)
	if err != nil {
		return delivery.Outcome{Err: err}
	}
	if cfg.BotToken == "" {
		return delivery.Outcome{Err: errors.New("transport.slack has no bot_token: messages wait until it is set")}
	}
	sc, err := ParseStreamConfig(st.Transport.Config)
	if err != nil {
		return delivery.Outcome{Err: fmt.Errorf("stream %s: %w", st.ID, err), Permanent: true}
	}
	parent, err := s.parent(ctx, st.ID, ev.Message)
	if err != nil {
		return delivery.Outcome{Err: err}
	}
	thread := threadOf(sc, ev.Message, parent)
	channel, err := s.channel(ctx, st.ID, sc, parent, thread)
	if err != nil {
		return delivery.Outcome{Err: err, Permanent: errors.Is(err, domain.ErrInvalid)}
	}
	return s.post(ctx, cfg, postMessage{Channel: channel, Text: ev.Message.Body, ThreadTS: thread})
}

// parent is the event a message answers on the same stream, if any.
func (s *Sender) parent(ctx context.Context, stream string, m domain.Message) (*domain.Event, error) {
	if m.InReplyTo == "" || slackTS.MatchString(m.InReplyTo) {
		return nil, nil
	}
	ev, err := s.store.GetEvent(ctx, m.InReplyTo)
	switch {
	case errors.Is(err, domain.ErrNotFound):
		return nil, nil
	case err != nil:
		return nil, err
	case ev.StreamID != stream:
		return nil, nil
	}
	return &ev, nil
}

// threadOf is the thread_ts a message goes in: that of the event it
// answers (inReplyTo an event id or a Slack ts), else its threadId when
// that is a Slack ts, else the stream's own thread, else none.
func threadOf(sc StreamConfig, m domain.Message, parent *domain.Event) string {
	switch {
	case slackTS.MatchString(m.InReplyTo):
		return m.InReplyTo
	case parent != nil && slackTS.MatchString(parent.Message.ThreadID):
		return parent.Message.ThreadID
	case slackTS.MatchString(m.ThreadID):
		return m.ThreadID
	}
	return sc.ThreadTS
}

// channel is where the message goes: the stream's channel; for a
// worker's stream without one, the channel of the event it answers, else
// of the thread's latest message on the stream.
func (s *Sender) channel(ctx context.Context, stream string, sc StreamConfig, parent *domain.Event, thread string) (string, error) {
	if sc.Channel != "" {
		return sc.Channel, nil
	}
	if c := channelOf(parent); c != "" {
		return c, nil
	}
	if thread != "" {
		ev, err := s.store.LatestInbound(ctx, stream, "", thread)
		if err != nil && !errors.Is(err, domain.ErrNotFound) {
			return "", err
		}
		if c := channelOf(&ev); c != "" {
			return c, nil
		}
	}
	return "", domain.Invalid("threadId", "a worker's stream without a channel posts in the threads it is in: inReplyTo an event of one, or threadId a thread_ts its stream holds")
}

// channelOf is the Slack channel an inbound event came from.
func channelOf(ev *domain.Event) string {
	if ev == nil {
		return ""
	}
	var x struct {
		Channel string `json:"channel"`
	}
	json.Unmarshal(ev.Message.Extra, &x)
	return x.Channel
}

type postMessage struct {
	Channel  string `json:"channel"`
	Text     string `json:"text"`
	ThreadTS string `json:"thread_ts,omitempty"`
}

// answer is the part of a Web API answer the sender reads.
type answer struct {
	OK    bool   `json:"ok"`
	Error string `json:"error"`
	TS    string `json:"ts"`
}

// permanent are chat.postMessage errors that retrying cannot mend.
var permanent = []string{"channel_not_found", "not_in_channel", "is_archived", "msg_too_long", "no_text",
	"invalid_auth", "account_inactive", "token_revoked", "not_authed", "missing_scope", "restricted_action"}

func (s *Sender) post(ctx context.Context, cfg Config, m postMessage) delivery.Outcome {
	ctx, cancel := context.WithTimeout(ctx, SendTimeout)
	defer cancel()
	body, _ := json.Marshal(m)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(cfg.APIURL, "/")+"/chat.postMessage", bytes.NewReader(body))
	if err != nil {
		return delivery.Outcome{Err: fmt.Errorf("transport.slack api_url: %w", err)}
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("Authorization", "Bearer "+cfg.BotToken)
	resp, err := s.client.Do(req)
	if err != nil {
		if ue, ok := errors.AsType[*url.Error](err); ok {
			err = ue.Err // the URL is the operator's, but keep answers short
		}
		return delivery.Outcome{Err: fmt.Errorf("slack chat.postMessage: %w", err)}
	}
	defer resp.Body.Close()
	var ans answer
	json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&ans)
	out := delivery.Outcome{Status: resp.StatusCode}
	switch {
	case resp.StatusCode == http.StatusOK && ans.OK:
		out.RemoteID = ans.TS
		return out
	case resp.StatusCode == http.StatusTooManyRequests:
		if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && secs > 0 {
			out.RetryAfter = time.Duration(secs) * time.Second
		}
	case slices.Contains(permanent, ans.Error):
		out.Permanent = true
	}
	out.Err = fmt.Errorf("slack chat.postMessage answered %d: %s", resp.StatusCode, orStatus(ans.Error, resp.Status))
	return out
}

func orStatus(e, status string) string {
	if e == "" {
		return status
	}
	return e
}
