package gitlab

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/transports/delivery"
	"github.com/helixml/helix-org/transports/transport"
)

// Sender posts what workers publish on gitlab streams as a note on the
// issue or merge request of the message's thread.
type Sender struct{ delivery.HTTP }

// NewSender returns the sender. Redirects are never followed, so the token
// only ever goes to api_url; a nil client gets a default.
func NewSender(st delivery.Store, client *http.Client) *Sender {
	return &Sender{delivery.NewHTTP(Kind, st, client)}
}

// Noteable is what a note goes on: an issue or a merge request of a
// project, by its iid (the number GitLab shows).
type Noteable struct {
	Project string
	// Kind is "issues" or "merge_requests", as the REST paths name them.
	Kind string
	IID  string
}

var threadRef = domain.LazyRegexp(`^([#!])([1-9][0-9]{0,9})$`)

// NoteableOf reads a thread: "#23" is issue 23 of project, "!1" merge
// request 1.
func NoteableOf(project, thread string) (Noteable, bool) {
	m := threadRef().FindStringSubmatch(thread)
	if m == nil {
		return Noteable{}, false
	}
	kind := "issues"
	if m[1] == "!" {
		kind = "merge_requests"
	}
	return Noteable{Project: project, Kind: kind, IID: m[2]}, true
}

// Path is the REST path of the noteable's notes; a project path is
// escaped whole ("group%2Fname"), as GitLab's API takes it.
func (n Noteable) Path() string {
	return "/projects/" + url.PathEscape(n.Project) + "/" + n.Kind + "/" + n.IID + "/notes"
}

// Send makes one attempt. What only the operator can fix (no token, GitLab
// down, a rate limit) is retried; what GitLab refuses for good (no such
// issue, no access, bad credentials) fails at once.
func (s *Sender) Send(ctx context.Context, st domain.Stream, ev domain.Event, _ int) delivery.Outcome {
	cfg, sc, out := transport.Ready(ctx, setting, s.Store, st, ParseStreamConfig)
	if out.Failed() {
		return out
	}
	n, err := s.noteable(ctx, st.ID, sc.Project, ev.Message)
	if err != nil {
		return delivery.Outcome{Err: err, Permanent: errors.Is(err, domain.ErrInvalid)}
	}
	return s.post(ctx, cfg, n, ev.Message.Body)
}

// noteable is what a message comments on: its threadId, else that of the
// event it answers on the same stream.
func (s *Sender) noteable(ctx context.Context, stream, project string, m domain.Message) (Noteable, error) {
	if n, ok := NoteableOf(project, m.ThreadID); ok {
		return n, nil
	}
	parent, err := s.Parent(ctx, stream, m.InReplyTo)
	if err != nil {
		return Noteable{}, err
	}
	if parent != nil {
		if n, ok := NoteableOf(project, parent.Message.ThreadID); ok {
			return n, nil
		}
	}
	return Noteable{}, domain.Invalid("threadId", `a note needs the issue or merge request it is on: threadId "#<iid>" (an issue) or "!<iid>" (a merge request), or inReplyTo an event of its thread`)
}

func (s *Sender) post(ctx context.Context, cfg Config, n Noteable, body string) delivery.Outcome {
	var ans struct {
		ID      int64  `json:"id"`
		Message any    `json:"message"`
		Error   string `json:"error"`
	}
	// GitLab takes personal, project, group and OAuth tokens as a bearer.
	resp, out := delivery.Do(ctx, s.Client, delivery.Call{Name: "gitlab note", URL: strings.TrimRight(cfg.APIURL, "/") + n.Path(),
		Header: map[string]string{"Authorization": "Bearer " + cfg.Token}, Body: map[string]string{"body": body}}, &ans)
	switch {
	case resp == nil:
		return out
	case resp.StatusCode == http.StatusCreated:
		out.RemoteID = strconv.FormatInt(ans.ID, 10)
		return out
	}
	out.Err = fmt.Errorf("gitlab note on %s %s%s answered %d: %s", n.Project, n.sigil(), n.IID, resp.StatusCode, reason(ans.Message, ans.Error, resp.Status))
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		out.RetryAfter = delivery.RetryAfter(resp.Header, "RateLimit-Reset")
	case resp.StatusCode >= 400 && resp.StatusCode < 500 && resp.StatusCode != http.StatusRequestTimeout:
		// 401 bad token, 403 no access, 404 no such project or issue,
		// 422 a body GitLab refuses: retrying cannot mend them.
		out.Permanent = true
	}
	return out
}

func (n Noteable) sigil() string {
	if n.Kind == "merge_requests" {
		return "!"
	}
	return "#"
}

// reason is GitLab's error text: message is a string, or an object of
// field errors.
func reason(message any, errText, status string) string {
	switch m := message.(type) {
	case string:
		if m != "" {
			return m
		}
	case nil:
	default:
		b, _ := json.Marshal(m)
		return string(b)
	}
	if errText != "" {
		return errText
	}
	return status
}
