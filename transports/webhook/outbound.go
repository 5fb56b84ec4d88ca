package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/safedial"
	"github.com/helixml/helix-org/transports/delivery"
)

// EventType is the Standard Webhooks "type" of every outbound payload.
const EventType = "message.published"

// Payload is what an outbound webhook carries: the Standard Webhooks
// structure with the published event, Message envelope and all, as data.
type Payload struct {
	Type      string       `json:"type"`
	Timestamp time.Time    `json:"timestamp"`
	Data      domain.Event `json:"data"`
}

// SenderOptions configure outbound delivery.
type SenderOptions struct {
	// Timeout cuts off one attempt. Default 30s.
	Timeout time.Duration
	// MaxResponseBytes is the most of an answer read. Default 64 KiB.
	MaxResponseBytes int64
	// UserAgent is sent with every request.
	UserAgent string
	// Now stamps webhook-timestamp; default time.Now.
	Now func() time.Time
}

// Sender POSTs events to a webhook stream's outbound_url.
type Sender struct {
	client *http.Client
	opts   SenderOptions
}

var _ delivery.Sender = (*Sender)(nil)

// NewSender builds a Sender over client, which should come from
// safedial.NewClient so private addresses are refused and redirects are not
// followed.
func NewSender(client *http.Client, opts SenderOptions) *Sender {
	if opts.Timeout <= 0 {
		opts.Timeout = 30 * time.Second
	}
	if opts.MaxResponseBytes <= 0 {
		opts.MaxResponseBytes = 64 << 10
	}
	if opts.UserAgent == "" {
		opts.UserAgent = "helix-org"
	}
	opts.Now = realClock(opts.Now)
	return &Sender{client: client, opts: opts}
}

// Kind is webhook.
func (s *Sender) Kind() domain.TransportKind { return Kind }

// Wants reports whether the stream has an outbound_url.
func (s *Sender) Wants(st domain.Stream) bool {
	var cfg Config
	return json.Unmarshal(st.Transport.Config, &cfg) == nil && cfg.OutboundURL != ""
}

// Send makes one POST. The webhook-id is the event id, the same on every
// attempt; the timestamp and signature are fresh each time.
func (s *Sender) Send(ctx context.Context, st domain.Stream, ev domain.Event, attempt int) delivery.Outcome {
	cfg, err := ParseConfig(st.Transport.Config)
	if err != nil || cfg.OutboundURL == "" {
		return delivery.Outcome{Err: fmt.Errorf("stream %s has no usable outbound_url", st.ID), Permanent: true}
	}
	body, err := json.Marshal(Payload{Type: EventType, Timestamp: ev.CreatedAt, Data: ev})
	if err != nil {
		return delivery.Outcome{Err: fmt.Errorf("encode payload: %w", err), Permanent: true}
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, cfg.OutboundURL, bytes.NewReader(body))
	if err != nil {
		return delivery.Outcome{Err: fmt.Errorf("build request: %w", err), Permanent: true}
	}
	if err := s.sign(req.Header, cfg.Secret, ev.ID, body); err != nil {
		return delivery.Outcome{Err: err, Permanent: true}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", s.opts.UserAgent)
	resp, err := s.client.Do(req)
	if err != nil {
		if errors.Is(err, safedial.ErrBlocked) {
			// A refused address stays refused: retrying would only repeat it.
			return delivery.Outcome{Err: fmt.Errorf("POST %s: %w; to let outbound webhooks reach private addresses, run `helix-org config set %s true` "+
				"(this delivery is not retried; events published after that are sent)", cfg.OutboundURL, err, safedial.AllowPrivateSetting.Key), Permanent: true}
		}
		return delivery.Outcome{Err: fmt.Errorf("POST %s: %w", cfg.OutboundURL, err)}
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, s.opts.MaxResponseBytes))
	return s.outcome(resp, answer, err)
}

// sign sets the Standard Webhooks headers; without a secret the request
// carries the id and timestamp but no signature.
func (s *Sender) sign(h http.Header, secret, id string, body []byte) error {
	ts := s.opts.Now().Unix()
	h.Set(HeaderID, id)
	h.Set(HeaderTimestamp, strconv.FormatInt(ts, 10))
	if secret == "" {
		return nil
	}
	key, err := Key(secret)
	if err != nil {
		return err
	}
	h.Set(HeaderSignature, Sign(key, id, ts, body))
	return nil
}

// outcome maps an answer to the engine's terms: only 2xx delivers, 410
// disables the endpoint, a 3xx is a failure (redirects are not followed).
func (s *Sender) outcome(resp *http.Response, answer []byte, readErr error) delivery.Outcome {
	out := delivery.Outcome{Status: resp.StatusCode}
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return out
	case resp.StatusCode == http.StatusGone:
		out.Disable = true
		out.Err = errors.New("remote answered 410 Gone: endpoint disabled")
		return out
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		out.Err = fmt.Errorf("remote answered %d redirect to %q: redirects are not followed; update outbound_url", resp.StatusCode, resp.Header.Get("Location"))
	default:
		out.Err = fmt.Errorf("remote answered %d: %s", resp.StatusCode, snippet(answer))
	}
	if readErr != nil {
		out.Err = fmt.Errorf("%w (reading the answer: %v)", out.Err, readErr)
	}
	out.RetryAfter = retryAfter(resp.Header.Get("Retry-After"), s.opts.Now())
	return out
}

// retryAfter parses Retry-After as seconds or an HTTP date; 0 if absent.
func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil && n > 0 {
		return time.Duration(min(n, int64(24*time.Hour/time.Second))) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return strconv.Quote(s)
}
