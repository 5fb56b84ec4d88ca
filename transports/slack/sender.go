package slack

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/transports/delivery"
	"github.com/helixml/helix-org/transports/transport"
)

// Sender posts what workers publish on slack streams with chat.postMessage.
type Sender struct{ delivery.HTTP }

// NewSender returns the sender. Redirects are never followed, so the bot
// token only ever goes to api_url; a nil client gets a default.
func NewSender(st delivery.Store, client *http.Client) *Sender {
	return &Sender{delivery.NewHTTP(Kind, st, client)}
}

// Send makes one attempt. What only the operator can fix (no bot token,
// Slack down) is retried; what Slack refuses for good (channel_not_found,
// not_in_channel, invalid_auth…) fails at once.
func (s *Sender) Send(ctx context.Context, st domain.Stream, ev domain.Event, _ int) delivery.Outcome {
	cfg, sc, out := transport.Ready(ctx, setting, s.Store, st, ParseStreamConfig)
	if out.Failed() {
		return out
	}
	parent, err := s.Parent(ctx, st.ID, ev.Message.InReplyTo)
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

// threadOf is the thread_ts a message goes in: that of the event it
// answers (inReplyTo an event id or a Slack ts), else its threadId when
// that is a Slack ts, else the stream's own thread, else none.
func threadOf(sc StreamConfig, m domain.Message, parent *domain.Event) string {
	switch {
	case slackTS().MatchString(m.InReplyTo):
		return m.InReplyTo
	case parent != nil && slackTS().MatchString(parent.Message.ThreadID):
		return parent.Message.ThreadID
	case slackTS().MatchString(m.ThreadID):
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
		ev, err := s.Store.LatestInbound(ctx, stream, "", thread)
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
	var ans answer
	resp, out := delivery.Do(ctx, s.Client, delivery.Call{Name: "slack chat.postMessage", URL: strings.TrimRight(cfg.APIURL, "/") + "/chat.postMessage",
		Header: map[string]string{"Content-Type": "application/json; charset=utf-8", "Authorization": "Bearer " + cfg.BotToken}, Body: m}, &ans)
	switch {
	case resp == nil:
		return out
	case resp.StatusCode == http.StatusOK && ans.OK:
		out.RemoteID = ans.TS
		return out
	case resp.StatusCode == http.StatusTooManyRequests:
		out.RetryAfter = delivery.RetryAfter(resp.Header, "")
	case slices.Contains(permanent, ans.Error):
		out.Permanent = true
	}
	out.Err = fmt.Errorf("slack chat.postMessage answered %d: %s", resp.StatusCode, cmp.Or(ans.Error, resp.Status))
	return out
}
