package tools

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// repoWithFiles makes a repository of four files in three areas: store
// (two files), cmd and the root. Split between w-b1 and w-b2, part 1 is
// store, part 2 the root and cmd.
func repoWithFiles(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"store/a.go", "store/b.go", "cmd/main.go", "README.md"} {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755)
		os.WriteFile(filepath.Join(dir, f), []byte("package x\n"), 0o644)
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "."}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

// withExploring starts t-login on a repository with files: it explores.
func withExploring(repo string) func(t *testing.T, f fixture) {
	return func(t *testing.T, f fixture) {
		t.Helper()
		withBuilders(t, f)
		if got := mustCall[taskOut](t, f.env, "create_spec_task", taskArgs(repo)); got.State != "exploration" {
			t.Fatalf("a task on a repository with files is %s, want exploration", got.State)
		}
	}
}

func TestReportExploration(t *testing.T) {
	repo := repoWithFiles(t)
	args := func(part int, summary string, read ...string) map[string]any {
		return map[string]any{"task": "t-login", "part": part, "summary": summary, "read": read}
	}
	runTable(t, "report_exploration", []toolCase[reportExplorationOut]{
		{
			name: "an explorer reports its part: what it did not read is unknown", setup: withExploring(repo), caller: "w-b2",
			args: args(2, "cmd/main.go is the entry point; no tests", "cmd", "store"),
			want: reportExplorationOut{Task: "t-login", Part: 2, State: domain.ExploreReported, Coverage: 0.5, Unknown: []string{"."}},
			check: func(t *testing.T, f fixture, _ reportExplorationOut) {
				view := mustCall[store.SpecTaskView](t, f.env, "get_spec_task", map[string]any{"task": "t-login"})
				if view.Task.State != domain.TaskExploration || len(view.Exploration) != 2 || view.Exploration[0].State != domain.ExploreOpen {
					t.Errorf("with part 1 open the task is %s, exploration %+v", view.Task.State, view.Exploration)
				}
			},
		},
		{
			name: "the last report wakes the planner with the whole exploration", caller: "w-b1",
			setup: func(t *testing.T, f fixture) {
				withExploring(repo)(t, f)
				mustCall[any](t, f.as("w-b2"), "report_exploration", args(2, "cmd/main.go is the entry point; no tests", "cmd"))
			},
			args: args(1, "store/ holds the users table; table tests with a temp SQLite", "store/"),
			want: reportExplorationOut{Task: "t-login", Part: 1, State: domain.ExploreReported, Coverage: 1},
			check: func(t *testing.T, f fixture, _ reportExplorationOut) {
				evs, _ := f.env.Store.ReadEvents(t.Context(), storeQuery(domain.InboxStream("w-echo")))
				body := evs[len(evs)-1].Message.Body
				wantAll(t, body, "You plan spec task t-login", "## Exploration\n\nCoverage: 2 of 3 areas read. Unknown (not read; plan with care or explore them in an item): ..",
					"### Part 1 (w-b1, 2 files): reported\n\nRead: store\nUnknown: none\n\nstore/ holds the users table",
					"### Part 2 (w-b2, 2 files): reported\n\nRead: cmd\nUnknown: .\n\ncmd/main.go is the entry point", "ask_human (expectsReply, task \"t-login\")")
				if view := mustCall[store.SpecTaskView](t, f.env, "get_spec_task", map[string]any{"task": "t-login"}); view.Task.State != domain.TaskSpecGeneration {
					t.Errorf("after the last report the task is %s", view.Task.State)
				}
			},
		},
		{name: "another explorer's part", setup: withExploring(repo), caller: "w-b1", args: args(2, "x"),
			wantErr: []string{"part 2 of t-login is w-b2's to explore"}, wantIs: domain.ErrForbidden},
		{name: "a part that does not exist", setup: withExploring(repo), caller: "w-b1", args: args(3, "x"), wantIs: domain.ErrNotFound},
		{name: "no summary", setup: withExploring(repo), caller: "w-b1", args: args(1, " "), wantErr: []string{"summary"}, wantIs: domain.ErrInvalid},
		{name: "twice", caller: "w-b2", setup: func(t *testing.T, f fixture) {
			withExploring(repo)(t, f)
			mustCall[any](t, f.as("w-b2"), "report_exploration", args(2, "cmd", "cmd"))
		}, args: args(2, "again"), wantErr: []string{"part 2 of t-login is already reported"}, wantIs: domain.ErrConflict},
		{name: "a task that does not explore", setup: withSpecTask, caller: "w-b1", args: args(1, "x"),
			wantErr: []string{`t-login is in state "spec_generation"`}, wantIs: domain.ErrConflict},
	})
	t.Run("an empty repository is greenfield: no exploration", func(t *testing.T) {
		f := newFixture(t)
		withBuilders(t, f)
		if got := mustCall[taskOut](t, f.env, "create_spec_task", taskArgs(gitRepo(t))); got.State != "spec_generation" {
			t.Errorf("a task on an empty repository is %s", got.State)
		}
		evs := taskEvents(t, f, "t-login")
		if !strings.Contains(evs[0].Message.Body, "The repository has no files yet (greenfield): nothing to explore.") {
			t.Errorf("the start says %q", evs[0].Message.Body)
		}
	})
}
