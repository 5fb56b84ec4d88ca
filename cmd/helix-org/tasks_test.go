package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

func runTasks(t *testing.T, args ...string) string {
	t.Helper()
	cmd := newTasksCmd()
	var out bytes.Buffer
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	if err := cmd.ExecuteContext(t.Context()); err != nil {
		t.Fatalf("tasks %v: %v\n%s", args, err, out.String())
	}
	return out.String()
}

// TestTasksCmd lists a task in implementation: its progress, and each
// builder's item, in a table and as JSON.
func TestTasksCmd(t *testing.T) {
	db := filepath.Join(t.TempDir(), "helix-org.db")
	st, err := store.Open(t.Context(), db, store.Options{Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if got := runTasks(t, "--db", db); got != "No spec tasks.\n" {
		t.Errorf("empty = %q", got)
	}
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(st.Bootstrap(ctx, nil))
	must(st.CreateRole(ctx, "w-owner", domain.Role{ID: "r-dev", Title: "Dev", Content: "dev"}))
	must(st.CreatePosition(ctx, "w-owner", domain.Position{ID: "p-dev", RoleID: "r-dev", Title: "Dev"}))
	for _, id := range []string{"w-plan", "w-b1"} {
		must(st.HireWorker(ctx, "w-owner", domain.Worker{ID: id, Kind: domain.WorkerAI, PositionID: "p-dev", Name: id}, nil))
	}
	must(st.CreateSpecTask(ctx, "w-owner", domain.SpecTask{ID: "t-login", Title: "Login", Prompt: "p", Planner: "w-plan", Builders: []string{"w-b1"}, Priority: 2}))
	must(st.SubmitSpec(ctx, "w-plan", "t-login", "d", []domain.TaskItem{{Seq: 1, Title: "Schema"}, {Seq: 2, Title: "Page", BlockedBy: []int{1}}}, 0))
	must(st.ReviewSpec(ctx, "w-owner", "t-login", true, ""))
	st.Close()

	out := runTasks(t, "--db", db)
	wantAll(t, "tasks", out, "TASK     STATE           DONE  PRIORITY  TITLE", "t-login  implementation  0/2   2         Login",
		"  t-login: w-b1 on item 1 (Schema) for ")
	var js struct {
		Tasks []store.SpecTaskView `json:"tasks"`
	}
	if err := json.Unmarshal([]byte(runTasks(t, "--db", db, "--json")), &js); err != nil {
		t.Fatal(err)
	}
	if len(js.Tasks) != 1 || js.Tasks[0].Task.State != domain.TaskImplementation || len(js.Tasks[0].Fleet) != 1 ||
		!strings.Contains(js.Tasks[0].Docs.Progress, "- [~] 1. Schema @w-b1") {
		t.Errorf("json = %+v", js.Tasks)
	}
}
