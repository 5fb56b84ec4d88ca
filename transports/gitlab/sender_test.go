//go:build !fuzzonly

// Left out of make fuzz's binaries (-tags fuzzonly): this file reaches the
// store, whose tree would be compiled again with fuzz instrumentation.

package gitlab_test

import (
	"strings"
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/outbox"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/transports/delivery"
	"github.com/helixml/helix-org/transports/gitlab"
	"github.com/helixml/helix-org/transports/gitlab/gitlabtest"
)

// TestNotesPosted: a worker's answer to a comment on a merge request goes
// back as a note on that merge request; a threadId names an issue ("#")
// or a merge request ("!") of the stream's project, by path or id.
func TestNotesPosted(t *testing.T) {
	f := newFixture(t)
	f.gitlab.Project("gitlab-org/gitlab-test", 5)
	f.gitlab.Project("mike/diaspora", 15)
	f.gitlab.MergeRequest("gitlab-org/gitlab-test", 1)
	f.gitlab.Issue("gitlab-org/gitlab-test", 17)
	f.gitlab.Issue("mike/diaspora", 3)
	if code, answer := f.send(t, gitlabtest.Delivery{Event: "Note Hook", Token: secretA, Idempotency: "k-mr"}, payload(t, "note_merge_request.json")); code != 200 {
		t.Fatalf("%d %s", code, answer)
	}
	comment := f.events(t, "s-test")[0]
	engine := outbox.New(f.st, []delivery.Sender{gitlab.NewSender(f.st, nil)}, outbox.Options{})
	tests := []struct {
		name, stream string
		msg          domain.Message
		want         gitlabtest.Note
	}{
		{"inReplyTo a comment on a merge request", "s-test", domain.Message{Body: "Fixed in the last push.", InReplyTo: comment.ID},
			gitlabtest.Note{Auth: "Bearer", Token: token, Project: "gitlab-org/gitlab-test", Noteable: "merge_requests", IID: 1, Body: "Fixed in the last push."}},
		{"threadId an issue", "s-test", domain.Message{Body: "Reproduced.", ThreadID: "#17"},
			gitlabtest.Note{Auth: "Bearer", Token: token, Project: "gitlab-org/gitlab-test", Noteable: "issues", IID: 17, Body: "Reproduced."}},
		{"a project named by id", "s-diaspora", domain.Message{Body: "Deployed.", ThreadID: "#3"},
			gitlabtest.Note{Auth: "Bearer", Token: token, Project: "15", Noteable: "issues", IID: 3, Body: "Deployed."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.msg.From = "w-dev"
			ev, err := f.st.Append(t.Context(), domain.Event{StreamID: tt.stream, Source: "w-dev", Message: tt.msg}, store.AppendOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if err := engine.Step(t.Context()); err != nil {
				t.Fatal(err)
			}
			got := f.gitlab.Next(t)
			if tt.want.ID = got.ID; got != tt.want || got.ID == 0 {
				t.Errorf("GitLab got %+v, want %+v (accepted)", got, tt.want)
			}
			ds, err := f.st.ListDeliveries(t.Context(), store.DeliveryQuery{EventID: ev.ID})
			if err != nil || len(ds) != 1 || ds[0].Status != domain.DeliveryDelivered || ds[0].RemoteID == "" {
				t.Errorf("delivery of %s: %+v, %v; want delivered with the note's id", ev.ID, ds, err)
			}
		})
	}
}

// TestSendRefusals: what GitLab refuses for good fails at once, naming
// why; a rate limit waits; a message with no issue or merge request to go
// on is refused without a call; the token is never in an error.
func TestSendRefusals(t *testing.T) {
	f := newFixture(t)
	f.gitlab.Project("gitlab-org/gitlab-test", 5)
	f.gitlab.Issue("gitlab-org/gitlab-test", 17)
	s := gitlab.NewSender(f.st, nil)
	stream, err := f.st.StreamWithSecrets(t.Context(), "s-test")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		settings  string
		script    []gitlabtest.Reply
		msg       domain.Message
		permanent bool
		retry     time.Duration
		wantErr   string
	}{
		{name: "no thread", msg: domain.Message{Body: "hi"}, permanent: true, wantErr: `threadId: a note needs the issue or merge request it is on`},
		{name: "no such issue", msg: domain.Message{Body: "hi", ThreadID: "#99"}, permanent: true, wantErr: "gitlab note on gitlab-org/gitlab-test #99 answered 404: 404 Not found"},
		{name: "rate limited", script: []gitlabtest.Reply{{Status: 429, RetryAfter: 9}}, msg: domain.Message{Body: "hi", ThreadID: "#17"}, retry: 9 * time.Second, wantErr: "answered 429"},
		{name: "GitLab down", script: []gitlabtest.Reply{{Status: 502}}, msg: domain.Message{Body: "hi", ThreadID: "#17"}, wantErr: "answered 502"},
		{name: "a revoked token", settings: `{"token":"glpat-revoked-token-0000","api_url":"` + f.gitlab.URL + `"}`, msg: domain.Message{Body: "hi", ThreadID: "#17"},
			permanent: true, wantErr: "answered 401: 401 Unauthorized"},
		{name: "no token yet: waits", settings: `{"api_url":"` + f.gitlab.URL + `"}`, msg: domain.Message{Body: "hi", ThreadID: "#17"}, wantErr: "transport.gitlab has no token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.settings == "" {
				tt.settings = `{"token":"` + token + `","api_url":"` + f.gitlab.URL + `"}`
			}
			must(t, f.st.SetSetting(t.Context(), gitlab.ConfigSetting, tt.settings))
			f.gitlab.Script(tt.script...)
			out := s.Send(t.Context(), stream, domain.Event{ID: "e-x", StreamID: "s-test", Message: tt.msg}, 1)
			if out.Err == nil || !strings.Contains(out.Err.Error(), tt.wantErr) || out.Permanent != tt.permanent || out.RetryAfter != tt.retry ||
				strings.Contains(out.Err.Error(), token) {
				t.Errorf("outcome %+v, want an error containing %q, permanent %v, retry after %v, without the token", out, tt.wantErr, tt.permanent, tt.retry)
			}
		})
	}
}

// TestSettings: transport.gitlab refuses a value the sender could not
// use, naming the key and never quoting the token.
func TestSettings(t *testing.T) {
	for _, tt := range []struct{ name, value, want string }{
		{"token and instance", `{"token":"glpat-abc","api_url":"https://gitlab.example.com/api/v4"}`, ""},
		{"a pasted newline", `{"token":"glpat-abc\n"}`, "token: must be an access token as GitLab shows it"},
		{"not a URL", `{"api_url":"gitlab.example.com"}`, "api_url:"},
		{"a typo", `{"tokn":"glpat-abc"}`, "not a transport.gitlab object"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := gitlab.ConfigSetting.Check(tt.value)
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "glpat-abc") {
				t.Errorf("Check = %v, want an error containing %q without the token", err, tt.want)
			}
		})
	}
}
