package store_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store/storetest"
)

// TestWorkspaces: what is attached to a worker and where its runs left
// its workspace are kept apart — a run recording its workspace keeps the
// attachment, an attach makes the recorded checkout stale — and workers
// that cannot have a workspace are refused with the sentinel callers map.
func TestWorkspaces(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	seed(t, st)
	ctx := t.Context()
	for _, w := range []domain.Worker{{ID: "w-ai", Kind: domain.WorkerAI}, {ID: "w-person", Kind: domain.WorkerHuman}, {ID: "w-gone", Kind: domain.WorkerAI}} {
		w.PositionID, w.Name = "p-a", w.ID
		if _, err := st.HireWorker(ctx, "w-owner", w, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.DismissWorker(ctx, "w-owner", "w-gone"); err != nil {
		t.Fatal(err)
	}
	if err := st.RecordWorkspace(ctx, "w-ai", "/envs/w-ai/workspace", "", "c1"); err != nil {
		t.Fatal(err)
	}
	own, _ := st.Workspace(ctx, "w-ai")
	if !own.Current() || own.Head != "c1" {
		t.Errorf("own workspace = %+v, want current at c1", own)
	}
	if _, err := st.AttachRepository(ctx, "w-owner", domain.Workspace{WorkerID: "w-ai", URL: "https://github.com/o/r", Base: "main", Forge: "github", Project: "o/r"}); err != nil {
		t.Fatal(err)
	}
	if ws, _ := st.Workspace(ctx, "w-ai"); ws.Current() {
		t.Errorf("after an attach the old checkout counts as current: %+v", ws)
	}
	// A run that began before the attach records what it prepared.
	if err := st.RecordWorkspace(ctx, "w-ai", "/envs/w-ai/workspace", "", "c2"); err != nil {
		t.Fatal(err)
	}
	ws, _ := st.Workspace(ctx, "w-ai")
	want := domain.Workspace{WorkerID: "w-ai", URL: "https://github.com/o/r", Base: "main", Forge: "github", Project: "o/r", Branch: "helix/w-ai", Dir: "/envs/w-ai/workspace", Head: "c2"}
	if diff := cmp.Diff(want, ws); diff != "" || ws.Current() {
		t.Errorf("workspace (-want +got):\n%s\ncurrent: %v", diff, ws.Current())
	}
	for _, tt := range []struct {
		worker string
		want   error
	}{{"w-person", domain.ErrInvalid}, {"w-gone", domain.ErrConflict}, {"w-nobody", domain.ErrNotFound}} {
		if _, err := st.AttachRepository(ctx, "w-owner", domain.Workspace{WorkerID: tt.worker, URL: "https://github.com/o/r"}); !errors.Is(err, tt.want) {
			t.Errorf("attach to %s: %v, want %v", tt.worker, err, tt.want)
		}
	}
	all, err := st.Workspaces(ctx)
	if err != nil || len(all) != 1 || all[0].WorkerID != "w-ai" {
		t.Errorf("Workspaces = %+v, %v", all, err)
	}
}
