package slack

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/transports/inbound"
	"github.com/helixml/helix-org/transports/transport"
)

// Pattern is the Events API request URL.
const Pattern = "POST /slack/events"

// Endpoint receives the Events API: 401 for a missing, stale or wrong
// signature (or no signing secret configured), 200 with the challenge for
// url_verification, 200 once a message is stored (or was: a retry), 202
// when there is nothing to store (another event type, the bot's own
// message, a channel no stream follows). now is the clock of the
// timestamp check (nil: time.Now).
func Endpoint(st transport.Store, now func() time.Time) inbound.Endpoint {
	if now == nil {
		now = time.Now
	}
	return inbound.Endpoint{Pattern: Pattern, Kind: Kind, MaxBody: MaxBodySetting,
		Check: func(r *http.Request) (inbound.Request, error) {
			cfg, err := setting.Load(r.Context(), st)
			if err != nil {
				return inbound.Request{}, err
			}
			if cfg.SigningSecret == "" {
				return inbound.Request{}, inbound.Unauthorized("", "transport.slack has no signing_secret: events are refused until it is set")
			}
			v, err := checkHeaders(cfg.SigningSecret, r.Header, now())
			if err != nil {
				return inbound.Request{}, err
			}
			return inbound.Request{Sum: v, Verify: v.Verify, Parse: func(body []byte) (inbound.Batch, error) {
				return parse(r.Context(), st, cfg, body)
			}}, nil
		}}
}

// envelope is the outer JSON of every Events API request.
type envelope struct {
	Type      string `json:"type"`
	Challenge string `json:"challenge"`
	TeamID    string `json:"team_id"`
	EventID   string `json:"event_id"`
	EventTime int64  `json:"event_time"`
	Event     event  `json:"event"`
	// Authorizations name the installation the event is for; its user_id
	// is the bot's own user when is_bot.
	Authorizations []struct {
		UserID string `json:"user_id"`
		IsBot  bool   `json:"is_bot"`
	} `json:"authorizations"`
}

// event is the inner message event.
type event struct {
	Type     string `json:"type"`
	Subtype  string `json:"subtype"`
	Channel  string `json:"channel"`
	User     string `json:"user"`
	BotID    string `json:"bot_id"`
	Text     string `json:"text"`
	TS       string `json:"ts"`
	ThreadTS string `json:"thread_ts"`

	// ChannelType is "im" in a DM with the bot, else "channel", "group"
	// or "mpim".
	ChannelType string `json:"channel_type"`
}

// storedSubtypes are the message subtypes people write; the rest (edits,
// deletions, joins, bot messages) are not messages to a stream.
var storedSubtypes = []string{"", "thread_broadcast", "file_share", "me_message"}

func parse(ctx context.Context, st transport.Store, cfg Config, body []byte) (inbound.Batch, error) {
	var env envelope
	if err := json.Unmarshal(body, &env); err != nil {
		return inbound.Batch{}, domain.Invalid("body", "is not Events API JSON: %v", err)
	}
	switch env.Type {
	case "url_verification":
		return inbound.Batch{Reply: map[string]string{"challenge": env.Challenge}}, nil
	case "event_callback":
	default:
		return inbound.Batch{Note: fmt.Sprintf("%q requests are not stored", env.Type)}, nil
	}
	ev := env.Event
	switch {
	case env.EventID == "":
		return inbound.Batch{}, domain.Required("event_id")
	case ev.Type == "app_mention":
		return inbound.Batch{Note: "an app_mention repeats a message event, which is the one stored"}, nil
	case ev.Type != "message" || !slices.Contains(storedSubtypes, ev.Subtype):
		return inbound.Batch{Note: fmt.Sprintf("%s %s events are not stored", ev.Type, ev.Subtype)}, nil
	case fromBot(env, cfg):
		return inbound.Batch{Note: "the bot's own message is not stored"}, nil
	case strings.TrimSpace(ev.Text) == "":
		return inbound.Batch{Note: "a message without text is not stored"}, nil
	}
	streams, err := st.ListStreams(ctx, Kind)
	if err != nil {
		return inbound.Batch{}, err
	}
	msg := message(env)
	var b inbound.Batch
	for _, s := range streams {
		ok, err := takes(ctx, st, s, ev)
		if err != nil {
			return inbound.Batch{}, err
		}
		if ok {
			b.Messages = append(b.Messages, domain.Inbound{StreamID: s.ID, Message: msg, Key: env.EventID, Sender: sender(ev)})
		}
	}
	if len(b.Messages) == 0 {
		b.Note = fmt.Sprintf("no slack stream follows channel %s, and the message names no worker with a slack stream", ev.Channel)
	}
	return b, nil
}

// takes says whether a stream takes the message: a channel's stream
// when it follows the channel (and thread), a worker's when the message
// names the worker or is in a thread the worker's stream is in.
func takes(ctx context.Context, st transport.Store, s domain.Stream, ev event) (bool, error) {
	var c StreamConfig
	if json.Unmarshal(s.Transport.Config, &c) != nil {
		return false, nil
	}
	if c.Worker == "" {
		return follows(c, ev), nil
	}
	if c.Channel != "" && c.Channel != ev.Channel {
		return false, nil
	}
	named, err := names(ctx, st, c, ev.Text)
	if err != nil || named {
		return named, err
	}
	if ev.ThreadTS == "" || ev.ThreadTS == ev.TS {
		return false, nil
	}
	// In the log: a mention stored here, an answer the worker gave from
	// here, or a post of its that started the thread.
	return st.OnThread(ctx, s.ID, ev.ThreadTS)
}

// fromBot recognises the bot's own messages: Slack marks them with
// bot_id; the bot's user id comes from config or the event's
// authorizations.
func fromBot(env envelope, cfg Config) bool {
	if env.Event.BotID != "" || env.Event.Subtype == "bot_message" {
		return true
	}
	if cfg.BotUserID != "" && env.Event.User == cfg.BotUserID {
		return true
	}
	for _, a := range env.Authorizations {
		if a.IsBot && a.UserID == env.Event.User {
			return true
		}
	}
	return false
}

// sender vouches for the person of an IM: Slack signed the request, and
// a DM with the bot (channel_type "im", a D… channel) has one person in
// it besides the bot, whose messages are dropped (fromBot). In any other
// channel anyone in it may have written, so it vouches for no one.
func sender(ev event) domain.Sender {
	if ev.ChannelType != "im" || !strings.HasPrefix(ev.Channel, "D") {
		return domain.Sender{}
	}
	return domain.Sender{Address: ev.Channel, How: "slack-im"}
}

// follows reports whether a channel's stream takes messages of this
// channel (and, when the stream is narrowed to one thread, of that
// thread).
func follows(c StreamConfig, ev event) bool {
	if c.Channel != ev.Channel {
		return false
	}
	return c.ThreadTS == "" || c.ThreadTS == ev.ThreadTS || c.ThreadTS == ev.TS
}

// message is the envelope of a channel message: messageId its ts, the
// thread its thread_ts (a top-level message starts its own thread), so a
// reply with this threadId or inReplyTo lands in the thread.
func message(env envelope) domain.Message {
	ev := env.Event
	thread := ev.ThreadTS
	if thread == "" {
		thread = ev.TS
	}
	m := domain.Message{From: ev.User, Body: ev.Text, BodyContentType: "text/plain", MessageID: ev.TS, ThreadID: thread}
	if ev.ThreadTS != "" && ev.ThreadTS != ev.TS {
		m.InReplyTo = ev.ThreadTS
	}
	m.Extra, _ = json.Marshal(map[string]any{"channel": ev.Channel, "team": env.TeamID, "event_id": env.EventID,
		"event_time": env.EventTime, "ts": ev.TS, "thread_ts": ev.ThreadTS, "subtype": ev.Subtype})
	return m
}
