package github

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/transports/delivery"
)

// DefaultAPIURL is GitHub's REST API.
const DefaultAPIURL = "https://api.github.com"

// SendTimeout cuts off one attempt to reach GitHub.
const SendTimeout = 30 * time.Second

// SenderStore is what the Sender reads.
type SenderStore interface {
	SettingOr(ctx context.Context, spec domain.SettingSpec) (string, error)
	GetEvent(ctx context.Context, id string) (domain.Event, error)
}

// Sender posts what workers publish on github streams as a comment on the
// issue or pull request of the message's thread ("#42").
type Sender struct {
	store  SenderStore
	client *http.Client
}

var _ delivery.Sender = (*Sender)(nil)

// NewSender returns the sender. Redirects are never followed, so the token
// only ever goes to api_url; a nil client gets a default.
func NewSender(st SenderStore, client *http.Client) *Sender {
	return &Sender{store: st, client: delivery.NoRedirects(client)}
}

// Kind is github.
func (s *Sender) Kind() domain.TransportKind { return Kind }

// Wants every github stream: what a worker publishes there is a comment.
func (s *Sender) Wants(st domain.Stream) bool { return st.Transport.Kind == Kind }

var issueThread = regexp.MustCompile(`^#([1-9][0-9]{0,9})$`)

// Send makes one attempt. What only the operator can fix (no token, GitHub
// down, a rate limit) is retried; what GitHub refuses for good (no such
// issue, a locked one, bad credentials) fails at once.
func (s *Sender) Send(ctx context.Context, st domain.Stream, ev domain.Event, _ int) delivery.Outcome {
	cfg, err := loadConfig(ctx, s.store)
	if err != nil {
		return delivery.Outcome{Err: err}
	}
	if cfg.Token == "" {
		return delivery.Outcome{Err: errors.New("transport.github has no token: comments wait until it is set")}
	}
	sc, err := ParseStreamConfig(st.Transport.Config)
	if err != nil {
		return delivery.Outcome{Err: fmt.Errorf("stream %s: %w", st.ID, err), Permanent: true}
	}
	number, err := s.issue(ctx, st.ID, ev.Message)
	if err != nil {
		return delivery.Outcome{Err: err, Permanent: errors.Is(err, domain.ErrInvalid)}
	}
	return s.post(ctx, cfg, sc.Repo, number, ev.Message.Body)
}

// issue is the number a message comments on: its threadId "#N", else that
// of the event it answers on the same stream.
func (s *Sender) issue(ctx context.Context, stream string, m domain.Message) (string, error) {
	if n := issueThread.FindStringSubmatch(m.ThreadID); n != nil {
		return n[1], nil
	}
	if m.InReplyTo != "" {
		parent, err := s.store.GetEvent(ctx, m.InReplyTo)
		switch {
		case err == nil && parent.StreamID == stream && issueThread.MatchString(parent.Message.ThreadID):
			return parent.Message.ThreadID[1:], nil
		case err != nil && !errors.Is(err, domain.ErrNotFound):
			return "", err
		}
	}
	return "", domain.Invalid("threadId", "a comment needs the issue or pull request it is on: threadId \"#<number>\", or inReplyTo an event of its thread")
}

func (s *Sender) post(ctx context.Context, cfg Config, repo, number, body string) delivery.Outcome {
	ctx, cancel := context.WithTimeout(ctx, SendTimeout)
	defer cancel()
	payload, _ := json.Marshal(map[string]string{"body": body})
	endpoint := strings.TrimRight(cfg.APIURL, "/") + "/repos/" + repo + "/issues/" + number + "/comments"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(payload))
	if err != nil {
		return delivery.Outcome{Err: fmt.Errorf("transport.github api_url: %w", err)}
	}
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
	req.Header.Set("Authorization", "Bearer "+cfg.Token)
	resp, err := s.client.Do(req)
	if err != nil {
		if ue, ok := errors.AsType[*url.Error](err); ok {
			err = ue.Err // the URL is the operator's, but keep answers short
		}
		return delivery.Outcome{Err: fmt.Errorf("github comment: %w", err)}
	}
	defer resp.Body.Close()
	var ans struct {
		Message string `json:"message"`
	}
	json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&ans)
	out := delivery.Outcome{Status: resp.StatusCode}
	if resp.StatusCode == http.StatusCreated {
		return out
	}
	out.Err = fmt.Errorf("github comment on %s#%s answered %d: %s", repo, number, resp.StatusCode, orStatus(ans.Message, resp.Status))
	switch {
	case resp.StatusCode == http.StatusTooManyRequests || resp.Header.Get("X-RateLimit-Remaining") == "0" || resp.Header.Get("Retry-After") != "":
		out.RetryAfter = retryAfter(resp.Header)
	case resp.StatusCode >= 400 && resp.StatusCode < 500:
		// 401 bad credentials, 403 no access, 404 no such issue, 410
		// issues disabled, 422 a body GitHub refuses: retrying cannot mend them.
		out.Permanent = true
	}
	return out
}

// retryAfter reads GitHub's rate-limit answer: Retry-After seconds, else
// the reset time of the spent limit.
func retryAfter(h http.Header) time.Duration {
	if secs, err := strconv.Atoi(h.Get("Retry-After")); err == nil && secs > 0 {
		return time.Duration(secs) * time.Second
	}
	if reset, err := strconv.ParseInt(h.Get("X-RateLimit-Reset"), 10, 64); err == nil {
		if d := time.Until(time.Unix(reset, 0)); d > 0 {
			return d
		}
	}
	return 0
}

func orStatus(msg, status string) string {
	if msg == "" {
		return status
	}
	return msg
}
