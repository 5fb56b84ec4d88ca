package email

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/transports/delivery"
	"github.com/helixml/helix-org/transports/transport"
)

// Sender sends what workers publish on email streams through Postmark's
// email API. The outbox calls it and persists its retries.
type Sender struct {
	delivery.HTTP
	log *slog.Logger
}

// NewSender returns the outbound sender. Redirects are never followed, so
// the server token only ever goes to api_url. nil client and logger get
// defaults.
func NewSender(st delivery.Store, client *http.Client, log *slog.Logger) *Sender {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Sender{HTTP: delivery.NewHTTP(Kind, st, client), log: log.With("component", "email")}
}

// Send makes one attempt to send ev. Problems only the operator can fix
// (config, token, Postmark's 5xx) are retried; a message Postmark rejects
// (422) or one with nobody to send it to fails at once.
func (s *Sender) Send(ctx context.Context, st domain.Stream, ev domain.Event, attempt int) delivery.Outcome {
	cfg, sc, out := transport.Ready(ctx, setting, s.Store, st, ParseStreamConfig)
	if out.Failed() {
		return out
	}
	replyTo, err := cfg.AliasAddress(sc.Alias)
	if err != nil {
		return delivery.Outcome{Err: err}
	}
	parent, err := s.parent(ctx, st.ID, ev.Message)
	if err != nil {
		return delivery.Outcome{Err: err}
	}
	msg, err := compose(cfg, replyTo, st, ev, parent)
	if err != nil {
		return delivery.Outcome{Err: err, Permanent: true}
	}
	out = s.post(ctx, cfg, msg)
	if !out.Failed() {
		s.log.Info("email sent", "stream", st.ID, "event", ev.ID, "attempt", attempt)
	}
	return out
}

// parent is the inbound message ev answers, found on the stream by
// inReplyTo (an event id or an email Message-ID) and otherwise by thread.
// Replying to a worker's own message answers the latest inbound message
// of that message's thread. The zero Event means none.
func (s *Sender) parent(ctx context.Context, stream string, m domain.Message) (domain.Event, error) {
	thread := m.ThreadID
	if m.InReplyTo != "" {
		ev, err := s.Store.GetEvent(ctx, m.InReplyTo)
		switch {
		case err == nil && ev.StreamID == stream && ev.Source == "":
			return ev, nil
		case err == nil && ev.StreamID == stream:
			thread = first([]string{thread}, ev.Message.ThreadID)
		case err != nil && !errors.Is(err, domain.ErrNotFound):
			return domain.Event{}, err
		default:
			if ev, err := s.Store.LatestInbound(ctx, stream, m.InReplyTo, ""); err == nil || !errors.Is(err, domain.ErrNotFound) {
				return ev, err
			}
		}
	}
	if thread == "" {
		return domain.Event{}, nil
	}
	ev, err := s.Store.LatestInbound(ctx, stream, "", thread)
	if errors.Is(err, domain.ErrNotFound) {
		return domain.Event{}, nil
	}
	return ev, err
}

// message is the body of POST /email.
type message struct {
	From          string            `json:"From"`
	To            string            `json:"To"`
	ReplyTo       string            `json:"ReplyTo"`
	Subject       string            `json:"Subject,omitempty"`
	TextBody      string            `json:"TextBody,omitempty"`
	HtmlBody      string            `json:"HtmlBody,omitempty"`
	Headers       []Header          `json:"Headers,omitempty"`
	MessageStream string            `json:"MessageStream"`
	Metadata      map[string]string `json:"Metadata,omitempty"`
}

// compose builds the email: To from the message's to (addresses only) or
// else the parent's Reply-To or sender; Subject from the message or
// "Re: " + the parent's; In-Reply-To and References continuing the
// parent's thread.
func compose(cfg Config, replyTo string, st domain.Stream, ev domain.Event, parent domain.Event) (message, error) {
	m := ev.Message
	var to []string
	for _, a := range m.To {
		if strings.Contains(a, "@") {
			to = append(to, a)
		}
	}
	var px extra
	if parent.ID != "" {
		json.Unmarshal(parent.Message.Extra, &px)
		if len(to) == 0 {
			to = append(to, first([]string{px.ReplyTo}, parent.Message.From))
		}
	}
	if len(to) == 0 || to[0] == "" {
		return message{}, errors.New("no recipient: give an address in to, or reply (inReplyTo or threadId) to a message that came in by email")
	}
	out := message{From: cfg.From, To: strings.Join(to, ", "), ReplyTo: replyTo, Subject: m.Subject,
		MessageStream: cfg.MessageStream, Metadata: map[string]string{"helix_event": ev.ID, "helix_stream": st.ID}}
	if m.BodyContentType == "text/html" {
		out.HtmlBody = m.Body
	} else {
		out.TextBody = m.Body
	}
	if parent.ID == "" {
		return out, nil
	}
	if out.Subject == "" {
		out.Subject = reSubject(parent.Message.Subject)
	}
	if id := parent.Message.MessageID; id != "" {
		id = bracket(id)
		refs := append(px.References, id)
		out.Headers = []Header{{Name: "In-Reply-To", Value: id}, {Name: "References", Value: strings.Join(refs, " ")}}
	}
	return out, nil
}

func reSubject(s string) string {
	if len(s) >= 3 && strings.EqualFold(s[:3], "re:") {
		return s
	}
	return "Re: " + s
}

func bracket(id string) string {
	if strings.HasPrefix(id, "<") {
		return id
	}
	return "<" + id + ">"
}

// postmarkAnswer is Postmark's reply to POST /email.
type postmarkAnswer struct {
	ErrorCode int    `json:"ErrorCode"`
	Message   string `json:"Message"`
	MessageID string `json:"MessageID"`
}

// post sends one message and classifies Postmark's answer.
func (s *Sender) post(ctx context.Context, cfg Config, m message) delivery.Outcome {
	var ans postmarkAnswer
	resp, out := delivery.Do(ctx, s.Client, delivery.Call{Name: "postmark", URL: strings.TrimRight(cfg.APIURL, "/") + "/email",
		Header: map[string]string{"Accept": "application/json", "X-Postmark-Server-Token": cfg.ServerToken}, Body: m}, &ans)
	switch {
	case resp == nil:
		return out
	case resp.StatusCode == http.StatusOK && ans.ErrorCode == 0:
		return out
	case resp.StatusCode == http.StatusUnprocessableEntity:
		out.Permanent = true
	case resp.StatusCode == http.StatusTooManyRequests:
		out.RetryAfter = delivery.RetryAfter(resp.Header, "")
	}
	out.Err = fmt.Errorf("postmark answered %d (error code %d): %s", resp.StatusCode, ans.ErrorCode, ans.Message)
	return out
}
