package store_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store/storetest"
)

// TestItemPullRequest: a recorded pull request is on the item and finds
// it back (project compared case-insensitively); bad records are refused
// naming the field, and an unknown pull request is not found.
func TestItemPullRequest(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	seed(t, st)
	ctx := t.Context()
	for _, id := range []string{"w-plan", "w-b1"} {
		if _, err := st.HireWorker(ctx, "w-owner", domain.Worker{ID: id, Kind: domain.WorkerAI, PositionID: "p-a", Name: id}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.CreateSpecTask(ctx, "w-owner", domain.SpecTask{ID: "t-x", Title: "X", Prompt: "x", Planner: "w-plan", Builders: []string{"w-b1"},
		PullRequests: domain.PullRequestsItem}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.SubmitSpec(ctx, "w-plan", "t-x", "d", []domain.TaskItem{{Seq: 1, Title: "one"}}, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := st.ReviewSpec(ctx, "w-owner", "t-x", true, ""); err != nil {
		t.Fatal(err)
	}
	pr := domain.ItemPullRequest{Forge: "github", Project: "Acme/App", Number: 7, URL: "https://github.com/Acme/App/pull/7", Head: "helix/w-b1"}
	for _, tc := range []struct {
		name    string
		seq     int
		pr      domain.ItemPullRequest
		wantErr string
		wantIs  error
	}{
		{name: "no number", seq: 1, pr: domain.ItemPullRequest{Forge: "github", Project: "a/b"}, wantErr: "pullRequest", wantIs: domain.ErrInvalid},
		{name: "unknown item", seq: 9, pr: pr, wantErr: "t-x", wantIs: domain.ErrNotFound},
		{name: "recorded", seq: 1, pr: pr},
	} {
		t.Run(tc.name, func(t *testing.T) {
			it, err := st.SetItemPullRequest(ctx, "t-x", tc.seq, tc.pr)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, tc.wantIs) {
					t.Fatalf("err = %v, want %q wrapping %v", err, tc.wantErr, tc.wantIs)
				}
				return
			}
			if err != nil || it.PullRequest == nil || *it.PullRequest != pr {
				t.Fatalf("item = %+v, %v", it, err)
			}
		})
	}
	view, err := st.GetSpecTask(ctx, "t-x")
	if err != nil || view.Task.PullRequests != domain.PullRequestsItem || view.Items[0].PullRequest == nil {
		t.Fatalf("task %+v items %+v: %v", view.Task, view.Items, err)
	}
	got, err := st.PullRequestItem(ctx, "github", "acme/app", 7)
	if diff := cmp.Diff(domain.ItemRef{Task: "t-x", Item: 1, Worker: "w-b1", URL: "https://github.com/Acme/App/pull/7"}, got); err != nil || diff != "" {
		t.Errorf("PullRequestItem (-want +got):\n%s %v", diff, err)
	}
	for _, miss := range []struct {
		forge, project string
		number         int
	}{{"gitlab", "acme/app", 7}, {"github", "acme/app", 8}, {"github", "acme/other", 7}} {
		if _, err := st.PullRequestItem(ctx, miss.forge, miss.project, miss.number); !errors.Is(err, domain.ErrNotFound) {
			t.Errorf("PullRequestItem(%v) = %v, want not found", miss, err)
		}
	}
}
