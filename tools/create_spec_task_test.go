package tools

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
)

func TestCreateSpecTask(t *testing.T) {
	repo := gitRepo(t)
	plain := notAGitRepo(t)
	with := func(edit func(map[string]any)) map[string]any {
		a := taskArgs("")
		edit(a)
		return a
	}
	runTable(t, "create_spec_task", []toolCase[taskOut]{
		{
			name:  "starts at once: the planner is asked for the spec",
			setup: withBuilders,
			args:  taskArgs(""),
			want:  taskOut{ID: "t-login", State: "spec_generation"},
			check: func(t *testing.T, f fixture, _ taskOut) {
				if diff := cmp.Diff([]string{"Spec task t-login: write the spec"}, inboxSubjects(t, f, "w-echo")); diff != "" {
					t.Errorf("planner inbox (-want +got):\n%s", diff)
				}
				evs, _ := f.env.Store.ReadEvents(t.Context(), storeQuery(domain.TaskStream("t-login")))
				if len(evs) != 1 || evs[0].Message.Subject != "t-login: backlog → spec_generation" {
					t.Errorf("task stream = %+v", evs)
				}
				if c := lastOrgChange(t, f.env.Store); c.Action != "spec_task_start" || c.Target != "t-login" {
					t.Errorf("s-org change = %+v", c)
				}
			},
		},
		{
			name:  "with a repository the requirements are committed on helix-design-docs",
			setup: withBuilders,
			args:  taskArgs(repo),
			want:  taskOut{ID: "t-login", State: "spec_generation"},
			check: func(t *testing.T, f fixture, _ taskOut) {
				if got := gitShow(t, repo, "t-login/requirements.md"); !strings.Contains(got, "Add login to the todo app.") {
					t.Errorf("requirements.md = %q", got)
				}
			},
		},
		{name: "repository missing", setup: withBuilders, args: taskArgs(filepath.Join(plain, "nope")),
			wantErr: []string{"repo: ", "does not exist"}, wantIs: domain.ErrInvalid},
		{name: "not a git repository", setup: withBuilders, args: taskArgs(plain),
			wantErr: []string{"repo: ", "is not a git repository"}, wantIs: domain.ErrInvalid},
		{name: "unknown builder", args: taskArgs(""), wantErr: []string{`"w-b1"`, "not found"}, wantIs: domain.ErrNotFound},
		{name: "reviewer must be a person", setup: withBuilders, args: with(func(a map[string]any) { a["reviewer"] = "w-b1" }),
			wantErr: []string{"reviewer: w-b1 is an AI worker"}, wantIs: domain.ErrInvalid},
		{name: "no builders", setup: withBuilders, args: with(func(a map[string]any) { a["builders"] = []string{} }),
			wantErr: []string{"builders: is required"}, wantIs: domain.ErrInvalid},
		{name: "bad id", setup: withBuilders, args: with(func(a map[string]any) { a["id"] = "login" }),
			wantErr: []string{`id: id "login" must start with "t-"`}, wantIs: domain.ErrInvalid},
		{name: "taken id", setup: withSpecTask, args: taskArgs(""), wantErr: []string{`spec task "t-login" already exists`}, wantIs: domain.ErrConflict},
		{name: "a worker may not put others' workers on a task", setup: func(t *testing.T, f fixture) { withBuilders(t, f); withLead(t, f) },
			caller: "w-lead", args: taskArgs(""), wantIs: domain.ErrForbidden},
	})
}
