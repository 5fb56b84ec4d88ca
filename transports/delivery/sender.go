package delivery

import (
	"bytes"
	"cmp"
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
)

// Store is what a Sender reads: its kind's settings and the events a
// message answers. *store.Store satisfies it.
type Store interface {
	SettingOr(ctx context.Context, spec domain.SettingSpec) (string, error)
	GetEvent(ctx context.Context, id string) (domain.Event, error)
	// LatestInbound is the latest message that came in on a stream, by
	// its provider id or its thread: where an answer naming only a
	// thread goes.
	LatestInbound(ctx context.Context, streamID, messageID, threadID string) (domain.Event, error)
}

// Timeout cuts off one call to a provider's API, well under the outbox's
// lease on the attempt.
const Timeout = 30 * time.Second

// maxAnswer bounds how much of a provider's answer is read.
const maxAnswer = 1 << 20

// HTTP is what a Sender to a provider's HTTP API is built on: the kind it
// serves, the store it reads, and a client that never follows a redirect,
// so credentials only ever go to the URL the operator configured. A
// Sender embeds it and adds Send.
type HTTP struct {
	kind   domain.TransportKind
	Store  Store
	Client *http.Client
}

// NewHTTP returns the base of kind's Sender; a nil client gets a default.
func NewHTTP(kind domain.TransportKind, st Store, client *http.Client) HTTP {
	return HTTP{kind: kind, Store: st, Client: NoRedirects(client)}
}

// Kind is the kind of the streams served.
func (h HTTP) Kind() domain.TransportKind { return h.kind }

// Wants every stream of the kind: what a worker publishes there goes out.
func (h HTTP) Wants(st domain.Stream) bool { return st.Transport.Kind == h.kind }

// Parent is the event a message answers (its inReplyTo) when that is an
// event of the same stream; nil when it answers nothing, an id the store
// does not hold (a provider's own id) or another stream's event.
func (h HTTP) Parent(ctx context.Context, stream, inReplyTo string) (*domain.Event, error) {
	if inReplyTo == "" {
		return nil, nil
	}
	ev, err := h.Store.GetEvent(ctx, inReplyTo)
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

// Ready is how every sender's attempt begins: the kind's settings as
// loaded (err, or a credential they lack, is the operator's to fix: the
// message waits, retried) and the stream's config read by parse (a bad
// one fails for good: it was checked when the stream was made).
func Ready[C interface{ Sendable() error }, S any](cfg C, err error, st domain.Stream, parse func(json.RawMessage) (S, error)) (S, Outcome) {
	var sc S
	if err == nil {
		err = cfg.Sendable()
	}
	if err != nil {
		return sc, Outcome{Err: err}
	}
	sc, err = parse(st.Transport.Config)
	if err != nil {
		return sc, Outcome{Err: fmt.Errorf("stream %s: %w", st.ID, err), Permanent: true}
	}
	return sc, Outcome{}
}

// Call is one JSON request to a provider's API.
type Call struct {
	// Name says what was called, at the head of errors:
	// "slack chat.postMessage".
	Name string
	// Method is POST when empty.
	Method string
	URL    string
	Header map[string]string
	// Body is sent as JSON; nil sends none.
	Body any
	// Form, when set, is sent as a form instead.
	Form url.Values
	// Secret is a credential inside URL (Telegram's bot token), never
	// shown in an error.
	Secret string
}

// Do makes c within Timeout and decodes the answer (up to 1 MiB) into
// answer when it is not nil. When nothing answered — a URL that cannot be
// used, a refused dial, the timeout — the response is nil and the
// Outcome's Err says why without quoting the URL. Otherwise the response
// (its body read and closed) and an Outcome with its status come back for
// the caller to judge.
func Do(ctx context.Context, client *http.Client, c Call, answer any) (*http.Response, Outcome) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	var body io.Reader
	ctype := ""
	switch {
	case c.Form != nil:
		body, ctype = strings.NewReader(c.Form.Encode()), "application/x-www-form-urlencoded"
	case c.Body != nil:
		b, err := json.Marshal(c.Body)
		if err != nil {
			return nil, Outcome{Err: fmt.Errorf("%s: %w", c.Name, err), Permanent: true}
		}
		body, ctype = bytes.NewReader(b), "application/json"
	}
	req, err := http.NewRequestWithContext(ctx, cmp.Or(c.Method, http.MethodPost), c.URL, body)
	if err != nil {
		return nil, Outcome{Err: fmt.Errorf("%s: the configured api_url is not usable", c.Name)}
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	for k, v := range c.Header {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		if ue, ok := errors.AsType[*url.Error](err); ok {
			err = ue.Err // the URL is the operator's; keep answers short
		}
		msg := err.Error()
		if c.Secret != "" {
			msg = strings.ReplaceAll(msg, c.Secret, "<secret>")
		}
		return nil, Outcome{Err: fmt.Errorf("%s: %s", c.Name, msg)}
	}
	defer resp.Body.Close()
	if answer != nil {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
		json.Unmarshal(raw, answer)
	}
	return resp, Outcome{Status: resp.StatusCode}
}

// RetryAfter is how long a rate-limited provider asks to wait: its
// Retry-After seconds, else the Unix time in its reset header (GitHub's
// X-RateLimit-Reset, GitLab's RateLimit-Reset; "" when it has none).
func RetryAfter(h http.Header, resetHeader string) time.Duration {
	if secs, err := strconv.Atoi(h.Get("Retry-After")); err == nil && secs > 0 {
		return time.Duration(secs) * time.Second
	}
	if resetHeader == "" {
		return 0
	}
	if reset, err := strconv.ParseInt(h.Get(resetHeader), 10, 64); err == nil {
		if d := time.Until(time.Unix(reset, 0)); d > 0 {
			return d
		}
	}
	return 0
}

// Need is nil when value, the credential field of setting a send needs,
// is set; else the error a message waits on until the operator sets it.
func Need(setting, field, value string) error {
	if value == "" {
		return fmt.Errorf("%s has no %s: messages wait until it is set", setting, field)
	}
	return nil
}
