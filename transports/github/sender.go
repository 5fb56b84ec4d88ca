package github

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/transports/delivery"
	"github.com/helixml/helix-org/transports/transport"
)

// DefaultAPIURL is GitHub's REST API.
const DefaultAPIURL = "https://api.github.com"

// Sender posts what workers publish on github streams as a comment on the
// issue or pull request of the message's thread ("#42").
type Sender struct{ delivery.HTTP }

// NewSender returns the sender. Redirects are never followed, so the token
// only ever goes to api_url; a nil client gets a default.
func NewSender(st delivery.Store, client *http.Client) *Sender {
	return &Sender{delivery.NewHTTP(Kind, st, client)}
}

var issueThread = domain.LazyRegexp(`^#([1-9][0-9]{0,9})$`)

// Send makes one attempt. What only the operator can fix (no token, GitHub
// down, a rate limit) is retried; what GitHub refuses for good (no such
// issue, a locked one, bad credentials) fails at once.
func (s *Sender) Send(ctx context.Context, st domain.Stream, ev domain.Event, _ int) delivery.Outcome {
	cfg, sc, out := transport.Ready(ctx, setting, s.Store, st, ParseStreamConfig)
	if out.Failed() {
		return out
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
	if n := issueThread().FindStringSubmatch(m.ThreadID); n != nil {
		return n[1], nil
	}
	parent, err := s.Parent(ctx, stream, m.InReplyTo)
	switch {
	case err != nil:
		return "", err
	case parent != nil && issueThread().MatchString(parent.Message.ThreadID):
		return parent.Message.ThreadID[1:], nil
	}
	return "", domain.Invalid("threadId", "a comment needs the issue or pull request it is on: threadId \"#<number>\", or inReplyTo an event of its thread")
}

func (s *Sender) post(ctx context.Context, cfg Config, repo, number, body string) delivery.Outcome {
	var ans struct {
		Message string `json:"message"`
	}
	resp, out := delivery.Do(ctx, s.Client, delivery.Call{Name: "github comment",
		URL:    strings.TrimRight(cfg.APIURL, "/") + "/repos/" + repo + "/issues/" + number + "/comments",
		Header: map[string]string{"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28", "Authorization": "Bearer " + cfg.Token},
		Body:   map[string]string{"body": body}}, &ans)
	if resp == nil || resp.StatusCode == http.StatusCreated {
		return out
	}
	out.Err = fmt.Errorf("github comment on %s#%s answered %d: %s", repo, number, resp.StatusCode, cmp.Or(ans.Message, resp.Status))
	switch {
	case resp.StatusCode == http.StatusTooManyRequests || resp.Header.Get("X-RateLimit-Remaining") == "0" || resp.Header.Get("Retry-After") != "":
		out.RetryAfter = delivery.RetryAfter(resp.Header, "X-RateLimit-Reset")
	case resp.StatusCode >= 400 && resp.StatusCode < 500:
		// 401 bad credentials, 403 no access, 404 no such issue, 410
		// issues disabled, 422 a body GitHub refuses: retrying cannot mend them.
		out.Permanent = true
	}
	return out
}
