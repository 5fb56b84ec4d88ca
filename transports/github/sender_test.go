package github_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/transports/github"
	"github.com/helixml/helix-org/transports/github/githubtest"
)

const ghToken = "ghp_sender_test_token_4c1a"

// senderStore is the sender's view of the store: the setting and the
// events a message may answer.
type senderStore struct {
	settings string
	events   map[string]domain.Event
}

func (s senderStore) SettingOr(_ context.Context, spec domain.SettingSpec) (string, error) {
	if spec.Key == github.ConfigSetting.Key {
		return s.settings, nil
	}
	return spec.Default, nil
}

func (s senderStore) GetEvent(_ context.Context, id string) (domain.Event, error) {
	if ev, ok := s.events[id]; ok {
		return ev, nil
	}
	return domain.Event{}, domain.ErrNotFound
}

func (s senderStore) LatestInbound(context.Context, string, string, string) (domain.Event, error) {
	return domain.Event{}, domain.ErrNotFound
}

// TestSender: a worker's message becomes a comment on its thread's issue;
// what GitHub refuses for good fails at once, the rest is retried; the
// token is never in an error.
func TestSender(t *testing.T) {
	fake := githubtest.New(t, ghToken)
	fake.Issue("helixml/docs", 42)
	stream := domain.Stream{ID: "s-docs", Transport: domain.Transport{Kind: github.Kind, Config: json.RawMessage(`{"repo":"helixml/docs","events":["issues"]}`)}}
	issue := domain.Event{ID: "e-issue", StreamID: "s-docs", Message: domain.Message{ThreadID: "#42", Body: "Install guide skips the key file"}}
	good := `{"webhook_secret":"s","token":"` + ghToken + `","api_url":"` + fake.URL + `"}`
	tests := []struct {
		name      string
		settings  string
		script    []githubtest.Reply
		msg       domain.Message
		wantIssue int // 0: no call reaches GitHub
		permanent bool
		wantErr   string
		retry     time.Duration
	}{
		{name: "threadId #42", settings: good, msg: domain.Message{Body: "Fixed on fix/issue-42.", ThreadID: "#42"}, wantIssue: 42},
		{name: "inReplyTo an event of the thread", settings: good, msg: domain.Message{Body: "On it.", InReplyTo: "e-issue"}, wantIssue: 42},
		{name: "no thread", settings: good, msg: domain.Message{Body: "Hello."}, permanent: true, wantErr: "threadId"},
		{name: "no token yet", settings: `{"webhook_secret":"s"}`, msg: domain.Message{Body: "x", ThreadID: "#42"}, wantErr: "has no token"},
		{name: "bad credentials", settings: strings.Replace(good, ghToken, "ghp_revoked", 1), msg: domain.Message{Body: "x", ThreadID: "#42"},
			wantIssue: 42, permanent: true, wantErr: "401: Bad credentials"},
		{name: "no such issue", settings: good, msg: domain.Message{Body: "x", ThreadID: "#7"}, wantIssue: 7, permanent: true, wantErr: "404"},
		{name: "rate limited", settings: good, script: []githubtest.Reply{{Status: http.StatusTooManyRequests, RetryAfter: 60}},
			msg: domain.Message{Body: "x", ThreadID: "#42"}, wantIssue: 42, wantErr: "429", retry: time.Minute},
		{name: "GitHub down", settings: good, script: []githubtest.Reply{{Status: http.StatusBadGateway}},
			msg: domain.Message{Body: "x", ThreadID: "#42"}, wantIssue: 42, wantErr: "502"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake.Script(tt.script...)
			before := len(fake.Comments())
			s := github.NewSender(senderStore{settings: tt.settings, events: map[string]domain.Event{"e-issue": issue}}, nil)
			out := s.Send(t.Context(), stream, domain.Event{ID: "e-1", StreamID: "s-docs", Message: tt.msg}, 1)
			if tt.wantErr == "" && out.Failed() || tt.wantErr != "" && (out.Err == nil || !strings.Contains(out.Err.Error(), tt.wantErr)) {
				t.Fatalf("outcome %+v, want error containing %q", out, tt.wantErr)
			}
			if out.Permanent != tt.permanent || out.RetryAfter != tt.retry {
				t.Errorf("permanent %v retry %v, want %v %v", out.Permanent, out.RetryAfter, tt.permanent, tt.retry)
			}
			if out.Err != nil && strings.Contains(out.Err.Error(), ghToken) {
				t.Errorf("the token is in the error: %v", out.Err)
			}
			got := fake.Comments()[before:]
			if tt.wantIssue == 0 {
				if len(got) != 0 {
					t.Errorf("GitHub got %+v, want nothing", got)
				}
				return
			}
			if len(got) != 1 || got[0].Repo != "helixml/docs" || got[0].Issue != tt.wantIssue || got[0].Body != tt.msg.Body || got[0].APIVersion != "2022-11-28" {
				t.Errorf("GitHub got %+v, want one comment on helixml/docs#%d", got, tt.wantIssue)
			}
		})
	}
}
