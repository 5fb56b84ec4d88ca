//go:build !fuzzonly

// Left out of make fuzz's binaries (-tags fuzzonly): this file reaches the
// store, whose tree would be compiled again with fuzz instrumentation.

package gitlab_test

import (
	"strings"
	"testing"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/transports/gitlab/gitlabtest"
)

// withItemMergeRequest is spec task t-login, built by w-dev, whose item 1
// the server opened merge request !1 of project for.
func withItemMergeRequest(t *testing.T, f fixture, project string) {
	t.Helper()
	ctx := t.Context()
	_, err := f.st.CreateSpecTask(ctx, store.OwnerWorker, domain.SpecTask{ID: "t-login", Title: "Login", Prompt: "Add login.",
		Planner: "w-dev", Builders: []string{"w-dev"}, PullRequests: domain.PullRequestsItem})
	must(t, err)
	_, err = f.st.SubmitSpec(ctx, "w-dev", "t-login", "# Design\n", []domain.TaskItem{{Seq: 1, Title: "Users table"}, {Seq: 2, Title: "Page", BlockedBy: []int{1}}}, 0)
	must(t, err)
	_, err = f.st.ReviewSpec(ctx, store.OwnerWorker, "t-login", true, "")
	must(t, err)
	_, err = f.st.ReportItem(ctx, "w-dev", "t-login", 1, domain.OutcomeDelivered, "users table", "")
	must(t, err)
	_, err = f.st.SetItemPullRequest(ctx, "t-login", 1, domain.ItemPullRequest{Forge: "gitlab", Project: project, Number: 1,
		URL: "https://gitlab.example/gitlab-org/gitlab-test/-/merge_requests/1", Head: "helix/w-dev"})
	must(t, err)
}

// TestReviewOnItemMergeRequest: GitLab's note on the merge request the
// server opened for an item lands on the task's stream and wakes the
// item's builder, whichever way the item names the project; a note on
// another merge request does not.
func TestReviewOnItemMergeRequest(t *testing.T) {
	for _, tc := range []struct {
		name, project string
		woken         bool
	}{
		{"project by path", "gitlab-org/gitlab-test", true},
		{"project by path, other case", "GitLab-org/GitLab-test", true},
		{"project by id", "5", true},
		{"another project's merge request !1", "gitlab-org/other", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			withItemMergeRequest(t, f, tc.project)
			code, body := f.send(t, gitlabtest.Delivery{Event: "Note Hook", Token: secretA, Idempotency: "k-1"}, payload(t, "note_merge_request.json"))
			if code != 200 {
				t.Fatalf("status %d: %s", code, body)
			}
			var review bool
			for _, ev := range f.events(t, domain.TaskStream("t-login")) {
				if ev.Message.Body == "This MR needs work." {
					review = true
					if !ev.Label.Untrusted {
						t.Errorf("the note on the task's stream is labelled %v, want untrusted", ev.Label)
					}
				}
			}
			if review != tc.woken {
				t.Errorf("the note on the task's stream: %v, want %v", review, tc.woken)
			}
			inbox := f.events(t, domain.InboxStream("w-dev"))
			last := inbox[len(inbox)-1].Message
			if told := strings.Contains(last.Body, "This MR needs work."); told != tc.woken {
				t.Errorf("w-dev's last notice %q: %q; told of the note: %v, want %v", last.Subject, last.Body, told, tc.woken)
			}
			if l := inbox[len(inbox)-1].Label; tc.woken && !l.Untrusted {
				t.Errorf("the notice quoting the note is labelled %v, want untrusted", l)
			}
		})
	}
}
