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

// Spec task fixtures build on the tool fixture:
//
//	w-b1, w-b2 ai builders in p-support; t-login planned by w-echo,
//	reviewed by w-owner, built by w-b1 and w-b2 (two at a time)
//	items after withSubmitted: 1 and 2 free, 3 after 1, 4 after 2 and 3

// taskOut is what the tables compare of a task.
type taskOut struct {
	ID    string `json:"task"`
	State string `json:"state"`
}

// itemOut is what the tables compare of an item.
type itemOut struct {
	Seq    int    `json:"item"`
	State  string `json:"state"`
	Worker string `json:"worker"`
}

// withBuilders also lets spec tasks use repositories in the temp dir,
// where every test's repositories are (spec_tasks.repo_roots).
func withBuilders(t *testing.T, f fixture) {
	t.Helper()
	if err := f.env.Store.SetSetting(t.Context(), SpecRepoRootsSetting, os.TempDir()); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"w-b1", "w-b2"} {
		must(t)(f.env.Store.HireWorker(t.Context(), store.OwnerWorker, domain.Worker{ID: id, Kind: domain.WorkerAI, PositionID: "p-support", Name: id}, nil))
	}
}

func taskArgs(repo string) map[string]any {
	args := map[string]any{"id": "t-login", "title": "Login", "prompt": "Add login to the todo app.", "planner": "w-echo", "builders": []string{"w-b1", "w-b2"}}
	if repo != "" {
		args["repo"] = repo
	}
	return args
}

func withSpecTask(t *testing.T, f fixture) {
	t.Helper()
	withBuilders(t, f)
	mustCall[any](t, f.env, "create_spec_task", taskArgs(""))
}

var loginItems = []map[string]any{
	{"seq": 1, "title": "Users table"},
	{"seq": 2, "title": "Login page"},
	{"seq": 3, "title": "Session handler", "blockedBy": []int{1}},
	{"seq": 4, "title": "Wire up", "blockedBy": []int{2, 3}},
}

func withSubmitted(t *testing.T, f fixture) {
	t.Helper()
	withSpecTask(t, f)
	mustCall[any](t, f.as("w-echo"), "submit_spec", map[string]any{"task": "t-login", "design": "# Design\n", "items": loginItems})
}

func withApproved(t *testing.T, f fixture) {
	t.Helper()
	withSubmitted(t, f)
	mustCall[any](t, f.env, "review_spec", map[string]any{"task": "t-login", "approve": true})
}

// gitRepo makes a git repository with one commit.
func gitRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "init"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

// gitShow reads a file from the design-docs branch.
func gitShow(t *testing.T, repo, path string) string {
	t.Helper()
	out, err := exec.Command("git", "-C", repo, "show", "helix-design-docs:"+path).CombinedOutput()
	if err != nil {
		t.Fatalf("git show %s: %v\n%s", path, err, out)
	}
	return string(out)
}

// inboxSubjects lists the subjects in a worker's inbox.
func inboxSubjects(t *testing.T, f fixture, worker string) []string {
	t.Helper()
	evs, err := f.env.Store.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{domain.InboxStream(worker)}})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ev := range evs {
		out = append(out, ev.Message.Subject)
	}
	return out
}

func notAGitRepo(t *testing.T) string {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "x"), nil, 0o644)
	return dir
}

func storeQuery(streams ...string) store.EventQuery { return store.EventQuery{StreamIDs: streams} }

// tickInWorktree edits progress.md in the design-docs worktree and commits
// it, as an agent with a shell would.
func tickInWorktree(t *testing.T, repo, task, old, new string) {
	t.Helper()
	wt := filepath.Join(repo, ".git-worktrees", "helix-design-docs")
	path := filepath.Join(wt, task, "progress.md")
	data, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(data), old) {
		t.Fatalf("progress.md (%v) lacks %q:\n%s", err, old, data)
	}
	os.WriteFile(path, []byte(strings.Replace(string(data), old, new, 1)), 0o644)
	out, err := exec.Command("git", "-C", wt, "-c", "user.name=agent", "-c", "user.email=a@a", "commit", "-qam", "tick").CombinedOutput()
	if err != nil {
		t.Fatalf("commit tick: %v\n%s", err, out)
	}
}
