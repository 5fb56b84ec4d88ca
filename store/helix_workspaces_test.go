package store_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store/storetest"
)

// TestHelixWorkspace: none before a worker's first helix run; each put
// replaces the last (the session recorded, then forgotten); a put with
// no project is refused.
func TestHelixWorkspace(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := t.Context()
	if _, err := st.HelixWorkspace(ctx, "w-x"); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("before any run: %v, want ErrNotFound", err)
	}
	steps := []domain.HelixWorkspace{
		{WorkerID: "w-x", ProjectID: "prj_1", AppID: "app_1"},
		{WorkerID: "w-x", ProjectID: "prj_1", AppID: "app_1", RepoID: "repo_1", SpecsSum: "abc", SessionID: "ses_1"},
		{WorkerID: "w-x", ProjectID: "prj_1", AppID: "app_1", RepoID: "repo_1", SpecsSum: "abc"},
	}
	for _, want := range steps {
		if err := st.PutHelixWorkspace(ctx, want); err != nil {
			t.Fatal(err)
		}
		got, err := st.HelixWorkspace(ctx, "w-x")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(domain.HelixWorkspace{}, "UpdatedAt")); diff != "" || got.UpdatedAt.IsZero() {
			t.Errorf("workspace (-put +got):\n%s", diff)
		}
	}
	if err := st.SetHelixSession(ctx, "w-x", "ses_2"); err != nil {
		t.Fatal(err)
	}
	if err := st.SetHelixSpecsSum(ctx, "w-x", "def"); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.HelixWorkspace(ctx, "w-x"); got.SessionID != "ses_2" || got.SpecsSum != "def" || got.RepoID != "repo_1" {
		t.Errorf("after setting the session and the sum: %+v", got)
	}
	if err := st.SetHelixSession(ctx, "w-y", "ses_3"); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("session of a worker with no workspace: %v, want ErrNotFound", err)
	}
	if err := st.ForgetHelixWorkspace(ctx, "w-x"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.HelixWorkspace(ctx, "w-x"); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("after forgetting: %v, want ErrNotFound", err)
	}
	if err := st.PutHelixWorkspace(ctx, domain.HelixWorkspace{WorkerID: "w-y"}); !errors.Is(err, domain.ErrInvalid) {
		t.Errorf("put without a project: %v, want ErrInvalid", err)
	}
}
