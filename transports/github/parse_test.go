package github

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/helixml/helix-org/domain"
)

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParse(t *testing.T) {
	cases := []struct {
		name     string
		event    string
		file     string
		body     string
		wantRepo string
		want     domain.Message
		wantErr  bool
	}{
		{
			name: "issue opened", event: "issues", file: "issues.json", wantRepo: "helixml/docs",
			want: domain.Message{From: "octocat", Subject: "Install guide skips the key file", Body: "Step 3 never says where helix-org.db.key lives.",
				ThreadID: "#42", MessageID: "d-1", BodyContentType: "text/markdown"},
		},
		{
			name: "comment: the comment is the body, the issue the thread", event: "issue_comment", file: "issue_comment.json", wantRepo: "helixml/docs",
			want: domain.Message{From: "hubot", Subject: "Install guide skips the key file", Body: "It sits beside the database; see --key-file.",
				ThreadID: "#42", MessageID: "d-1", BodyContentType: "text/markdown"},
		},
		{
			name: "pull request with a null body", event: "pull_request", file: "pull_request.json", wantRepo: "HelixML/Docs",
			want: domain.Message{From: "octocat", Subject: "Document the key file", Body: "pull_request opened by octocat in HelixML/Docs",
				ThreadID: "#7", MessageID: "d-1", BodyContentType: "text/markdown"},
		},
		{
			name: "push", event: "push", wantRepo: "a/b",
			body: `{"ref":"refs/heads/main","head_commit":{"message":"fix typo"},"repository":{"full_name":"a/b"},"sender":{"login":"x"}}`,
			want: domain.Message{From: "x", Subject: "push to refs/heads/main", Body: "fix typo", MessageID: "d-1", BodyContentType: "text/markdown"},
		},
		{
			name: "release", event: "release", wantRepo: "a/b",
			body: `{"action":"published","release":{"tag_name":"v1.0","name":"","body":"notes"},"repository":{"full_name":"a/b"}}`,
			want: domain.Message{Subject: "v1.0", Body: "notes", MessageID: "d-1", BodyContentType: "text/markdown"},
		},
		{
			name: "another event", event: "workflow_run", wantRepo: "a/b",
			body: `{"action":"completed","workflow_run":{"name":"ci"},"repository":{"full_name":"a/b"}}`,
			want: domain.Message{Subject: "workflow_run completed", Body: "workflow_run completed in a/b", MessageID: "d-1", BodyContentType: "text/markdown"},
		},
		{name: "no repository", event: "issues", body: `{"action":"opened"}`,
			want: domain.Message{Subject: "issues opened", Body: "issues opened", MessageID: "d-1", BodyContentType: "text/markdown"}},
		{name: "an empty payload carries nothing", event: "issues", body: `{}`, wantErr: true},
		{name: "malformed JSON", event: "issues", body: `{"action":`, wantErr: true},
		{name: "an array", event: "issues", body: `[1,2]`, wantErr: true},
		{name: "null", event: "issues", body: `null`, wantErr: true},
		{name: "issue of the wrong type", event: "issues", body: `{"issue":"x"}`, wantErr: true},
		{name: "no event", event: "", body: `{}`, wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body := []byte(tc.body)
			if tc.file != "" {
				body = readTestdata(t, tc.file)
			}
			got, err := Parse(tc.event, "d-1", body)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("Parse succeeded with %+v, want an error", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Repo != tc.wantRepo {
				t.Errorf("repo = %q, want %q", got.Repo, tc.wantRepo)
			}
			if diff := cmp.Diff(tc.want, got.Message, cmpopts.IgnoreFields(domain.Message{}, "Extra")); diff != "" {
				t.Errorf("envelope (-want +got):\n%s", diff)
			}
			checkExtra(t, body, tc.event, got.Message.Extra)
		})
	}
}

// checkExtra asserts extra is the whole payload plus "event".
func checkExtra(t *testing.T, body []byte, event string, extra json.RawMessage) {
	t.Helper()
	var want, got map[string]any
	if err := json.Unmarshal(body, &want); err != nil {
		t.Fatal(err)
	}
	want["event"] = event
	if err := json.Unmarshal(extra, &got); err != nil {
		t.Fatalf("extra is not a JSON object: %v", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("extra is not the payload plus event (-want +got):\n%s", diff)
	}
}

// TestParsePullRequest: the events a spec-task item's builder hears of
// carry the pull request's number; others carry none.
func TestParsePullRequest(t *testing.T) {
	for _, tc := range []struct {
		event, file string
		want        int
	}{
		{"pull_request_review_comment", "pull_request_review_comment.json", 2},
		{"pull_request_review", "pull_request_review.json", 2},
		{"check_run", "check_run.json", 2},
		{"pull_request", "pull_request.json", 0},
		{"issue_comment", "issue_comment.json", 0},
	} {
		t.Run(tc.event, func(t *testing.T) {
			d, err := Parse(tc.event, "d-1", readTestdata(t, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if d.PullRequest != tc.want {
				t.Errorf("pull request %s#%d, want #%d", d.Repo, d.PullRequest, tc.want)
			}
		})
	}
}
