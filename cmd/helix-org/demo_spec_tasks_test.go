package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/agent/llm"
	"github.com/helixml/helix-org/agent/llm/llmtest"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/tools"
)

// The greeter's items as the scripted planner plans them: the first spec
// has no README item; the reviewer asks for one, and the revision has
// four items, 1 and 2 free, 3 after 1, 4 after 2 and 3.
var (
	greeterV1 = []map[string]any{
		{"seq": 1, "title": "Greet by name", "files": []string{"greet.sh"}},
		{"seq": 2, "title": "French with -f", "files": []string{"greet.sh"}, "blockedBy": []int{1}},
		{"seq": 3, "title": "Test script", "files": []string{"test.sh"}, "verify": "sh test.sh", "blockedBy": []int{2}},
	}
	greeterV2 = []map[string]any{
		{"seq": 1, "title": "Greet by name", "files": []string{"greet.sh"}},
		{"seq": 2, "title": "README", "files": []string{"README.md"}},
		{"seq": 3, "title": "French with -f", "files": []string{"greet.sh"}, "blockedBy": []int{1}},
		{"seq": 4, "title": "Test script", "files": []string{"test.sh"}, "verify": "sh test.sh", "blockedBy": []int{2, 3}},
	}
	// greeterFiles is what each item writes in the feature worktree.
	greeterFiles = map[int][2]string{
		1: {"greet.sh", "#!/bin/sh\nname=${1:-world}\necho \"hello $name\"\n"},
		2: {"README.md", "# greeter\n\n`sh greet.sh [-f] [name]`\n"},
		3: {"greet.sh", "#!/bin/sh\nif [ \"$1\" = -f ]; then echo \"bonjour ${2:-monde}\"; exit; fi\necho \"hello ${1:-world}\"\n"},
		4: {"test.sh", "#!/bin/sh\nset -e\nd=$(dirname \"$0\")\n[ \"$(sh $d/greet.sh Ada)\" = \"hello Ada\" ]\n[ \"$(sh $d/greet.sh -f Ada)\" = \"bonjour Ada\" ]\necho ok\n"},
	}
	handout = regexp.MustCompile(`You build item (\d+) of spec task (t-[a-z0-9-]+)`)
	explore = regexp.MustCompile(`You explore part (\d+) of \d+ of the repository of spec task (t-[a-z0-9-]+)`)
)

// specTaskScript plays the planner (submit_spec, revised after review)
// and the builders: a real shell edits and commits the item on the
// feature branch, then report_item. Items 1 and 2 meet before they
// commit, which only two runs at once can do.
//
// With gate set, those two then also wait for the file gate to exist,
// so a test can kill the server while both are in the middle.
func specTaskScript(repo, gate string) llmtest.Script {
	return func(t llmtest.Turn) llmtest.Reply {
		p := t.Prompt()
		switch {
		case t.CallsTo("submit_spec") > 0 || t.CallsTo("report_item") > 0:
			return llmtest.Reply{Text: "Done."}
		case strings.Contains(p, "requested changes to t-greeter"):
			return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("submit_spec", map[string]any{"task": "t-greeter",
				"design": "# Greeter\n\nRepository: " + repo + "\n\ngreet.sh takes a name and -f; test.sh checks both; a README says how.\n", "items": greeterV2})}}
		case strings.Contains(p, "You plan spec task t-greeter"):
			return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("submit_spec", map[string]any{"task": "t-greeter",
				"design": "# Greeter\n\nRepository: " + repo + "\n\ngreet.sh takes a name and -f; test.sh checks both.\n", "items": greeterV1})}}
		}
		if e := explore.FindStringSubmatch(p); e != nil {
			var part int
			fmt.Sscan(e[1], &part)
			if t.CallsTo("report_exploration") > 0 {
				return llmtest.Reply{Text: "Done."}
			}
			if t.CallsTo("bash") > 0 { // a real shell read the partition: its output is the finding
				return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("report_exploration", map[string]any{"task": e[2], "part": part,
					"summary": "greet.sh, a POSIX sh script:\n" + t.Results()[0].Content, "read": []string{"."}})}}
			}
			return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("bash", map[string]any{"command": "git -C " + repo + " ls-files; cat " + repo + "/greet.sh"})}}
		}
		m := handout.FindStringSubmatch(p)
		if m == nil {
			return llmtest.Reply{Text: "Nothing to do."}
		}
		var item int
		fmt.Sscan(m[1], &item)
		if t.CallsTo("bash") > 0 {
			res := t.Results()[0]
			outcome, summary := "delivered", "committed item "+m[1]
			if res.IsError || !strings.Contains(res.Content, "committed") {
				outcome, summary = "blocked", res.Content
			}
			return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("report_item", map[string]any{"task": m[2], "item": item, "outcome": outcome, "summary": summary})}}
		}
		worker := strings.TrimPrefix(llmtest.Triggers(p)[0].Stream, "s-inbox-")
		return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("bash", map[string]any{"command": builderCommand(repo, m[2], worker, item, gate)})}}
	}
}

// builderCommand is what a builder runs for an item: the shared feature
// worktree (made once, under a lock), the edit, a commit as the builder
// unless a cut-off run of the same item already made it.
func builderCommand(repo, task, worker string, item int, gate string) string {
	file := greeterFiles[item]
	wt := repo + "/.git-worktrees/feature-" + task
	meet := ""
	if item == 1 || item == 2 {
		other := 3 - item
		meet = fmt.Sprintf("touch %[1]s/.git/demo-started-%[2]d\nfor i in $(seq 600); do [ -e %[1]s/.git/demo-started-%[3]d ] && break; sleep 0.05; done\n"+
			"[ -e %[1]s/.git/demo-started-%[3]d ] || { echo item %[3]d never ran beside me; exit 1; }\n", repo, item, other)
		if gate != "" {
			meet += fmt.Sprintf("while [ ! -e %s ]; do sleep 0.05; done\n", gate)
		}
	}
	verify := ""
	if item == 4 {
		verify = "sh " + wt + "/test.sh\n"
	}
	return fmt.Sprintf(`set -e
exec 9>%[1]s/.git/feature.lock
flock 9
[ -d %[2]s ] || git -C %[1]s worktree add -q -b feature/%[3]s %[2]s main
flock -u 9
%[4]sflock 9
cat > %[2]s/%[5]s <<'EOF'
%[6]sEOF
%[7]sgit -C %[2]s add -A
git -C %[2]s diff --cached --quiet || git -C %[2]s -c user.name=%[8]s -c user.email=%[8]s@demo commit -qm "item %[9]d"
echo committed
`, repo, wt, task, meet, file[0], file[1], verify, worker, item)
}

// TestDemoSpecTasks follows demos/spec-tasks/README.md with a scripted
// model: the spec is written, sent back once, revised and approved; four
// items are built by two builders (1 and 2 at once, 3 after 1, 4 after 2
// and 3), each committing on the feature branch; the work is approved and
// the task is done. The design docs only ever move forward, and a branch
// switch in the main checkout leaves their worktree alone.
func TestDemoSpecTasks(t *testing.T) {
	t.Parallel()
	repo := greeterRepo(t)
	fake := llmtest.New(t, llm.Anthropic, specTaskScript(repo, ""))
	st := openTestStore(t)
	ctx := t.Context()
	st.SetSetting(ctx, agent.RuntimeSetting, agent.RuntimeBuiltin)
	useFake(t, st, llm.Anthropic, fake)
	st.SetSetting(ctx, agent.BashSetting, `{"workers":["w-b1","w-b2"]}`) // README step 2
	shareWithAgents(t, st, repo)                                         // README step 2
	st.SetSetting(ctx, tools.SpecRepoRootsSetting, filepath.Dir(repo))
	_, _, owner := startServe(t, st, io.Discard)

	fill := strings.NewReplacer("<repo>", repo)
	for _, c := range readmeCalls(t, "../../demos/spec-tasks/README.md", "## 3. Set up the team") {
		callJSON(t, owner, c.tool, fill.Replace(c.args))
	}
	waitState(t, st, "t-greeter", domain.TaskSpecReview)
	switchBranch(t, repo) // the main checkout moves; the docs worktree does not

	reviews := readmeCalls(t, "../../demos/spec-tasks/README.md", "## 4. Review")
	callJSON(t, owner, reviews[0].tool, reviews[0].args) // changes requested
	waitState(t, st, "t-greeter", domain.TaskSpecReview)
	callJSON(t, owner, reviews[1].tool, reviews[1].args) // approved
	waitState(t, st, "t-greeter", domain.TaskImplementationReview)
	callJSON(t, owner, "review_spec", `{"task": "t-greeter", "approve": true}`)

	view, err := st.GetSpecTask(ctx, "t-greeter")
	if err != nil {
		t.Fatal(err)
	}
	wantStates(t, st)
	wantOrder(t, view.Items)
	wantForwardOnly(t, repo)
	if out := git(t, repo, "log", "--format=%an %s", "feature/t-greeter"); !strings.Contains(out, "w-b1 item") || !strings.Contains(out, "w-b2 item") {
		t.Errorf("feature branch log lacks commits by both builders:\n%s", out)
	}
	if out := git(t, repo, "show", "feature/t-greeter:test.sh"); !strings.Contains(out, "bonjour Ada") {
		t.Errorf("test.sh on the feature branch = %q", out)
	}
	progress := git(t, repo, "show", "helix-design-docs:t-greeter/progress.md")
	wantAll(t, "progress.md", progress, "- [x] 1. Greet by name", "- [x] 2. README", "- [x] 3. French with -f (after 1)", "- [x] 4. Test script (after 2, 3)")
	if _, err := os.Stat(filepath.Join(repo, ".git-worktrees", "helix-design-docs", "t-greeter", "sessions", "4-w-b1.md")); err != nil {
		if _, err2 := os.Stat(filepath.Join(repo, ".git-worktrees", "helix-design-docs", "t-greeter", "sessions", "4-w-b2.md")); err2 != nil {
			t.Errorf("no session note for item 4: %v", err)
		}
	}
	wantAll(t, "helix-org tasks", runTasks(t, "--db", st.Path()), "t-greeter  done   4/4")
	wantExplored(t, fake, view)
	wantPatterns(t, st, owner)
}

// wantExplored checks the explore phase: one partition (the root's one
// file) read by w-b1, and the planner planned with what it found.
func wantExplored(t *testing.T, fake *llmtest.Server, view store.SpecTaskView) {
	t.Helper()
	if len(view.Exploration) != 1 || view.Exploration[0].Worker != "w-b1" || view.Exploration[0].State != domain.ExploreReported ||
		view.Exploration[0].Coverage != 1 || !strings.Contains(view.Exploration[0].Summary, `echo "hello"`) {
		t.Errorf("exploration = %+v, want part 1 read whole by w-b1, greet.sh quoted", view.Exploration)
	}
	for _, turn := range fake.Turns() {
		if p := turn.Prompt(); strings.Contains(p, "You plan spec task t-greeter") {
			wantAll(t, "the planner's prompt", p, "## Exploration", "Coverage: 1 of 1 areas read.", "### Part 1 (w-b1, 1 files): reported", `echo "hello"`)
			return
		}
	}
	t.Error("the planner was never asked to plan")
}

// wantPatterns checks the learn step of the accepted work: a pattern per
// delivered item, quarantined, and the session's end naming them.
func wantPatterns(t *testing.T, st *store.Store, owner *mcp.ClientSession) {
	t.Helper()
	ins := servertest.Call[struct {
		Insights []struct {
			ID, Type, Resolution string
			Untrusted            bool
		}
	}](t, owner, "list_insights", map[string]any{"tag": "t-greeter"}).Insights
	if len(ins) != 4 {
		t.Fatalf("insights tagged t-greeter: %+v, want 4 proposed patterns", ins)
	}
	for _, in := range ins {
		if in.Type != "pattern" || !in.Untrusted || !strings.HasPrefix(in.Resolution, "What worked: committed item ") {
			t.Errorf("%+v, want a quarantined pattern of what worked", in)
		}
	}
	evs, err := st.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{domain.TaskStream("t-greeter")}})
	if err != nil {
		t.Fatal(err)
	}
	if last := evs[len(evs)-1].Message; last.Subject != "t-greeter: learned 4 insights" {
		t.Errorf("the task's stream ends with %q: %s", last.Subject, last.Body)
	}
}

// greeterRepo is README step 1.
func greeterRepo(t *testing.T) string {
	t.Helper()
	repo := filepath.Join(t.TempDir(), "greeter")
	os.MkdirAll(repo, 0o755)
	git(t, repo, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(repo, "greet.sh"), []byte("#!/bin/sh\necho \"hello\"\n"), 0o755)
	git(t, repo, "add", "greet.sh")
	git(t, repo, "-c", "user.name=dev", "-c", "user.email=dev@demo", "commit", "-qm", "a greeter")
	return repo
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func callJSON(t *testing.T, cs *mcp.ClientSession, tool, args string) {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(args), &m); err != nil {
		t.Fatalf("%s args: %v", tool, err)
	}
	servertest.Call[map[string]any](t, cs, tool, m)
}

// waitState waits, on the store's change signal, for a task to reach a
// state, failing on a final state that is not it.
func waitState(t *testing.T, st *store.Store, task string, want domain.TaskState) {
	t.Helper()
	deadline := time.After(90 * time.Second)
	for {
		changed := st.Changed()
		view, err := st.GetSpecTask(t.Context(), task)
		if err != nil {
			t.Fatal(err)
		}
		if view.Task.State == want {
			waitIdle(t, st)
			return
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("%s is %s after 90s, want %s; items %+v", task, view.Task.State, want, view.Items)
		}
	}
}

// switchBranch checks another branch out in the main checkout and back,
// and fails if the design-docs worktree changed meanwhile.
func switchBranch(t *testing.T, repo string) {
	t.Helper()
	wt := filepath.Join(repo, ".git-worktrees", "helix-design-docs")
	before := git(t, wt, "rev-parse", "HEAD") + git(t, wt, "status", "--porcelain")
	git(t, repo, "checkout", "-q", "-b", "elsewhere")
	os.WriteFile(filepath.Join(repo, "greet.sh"), []byte("#!/bin/sh\necho elsewhere\n"), 0o755)
	git(t, repo, "-c", "user.name=dev", "-c", "user.email=dev@demo", "commit", "-qam", "elsewhere")
	if after := git(t, wt, "rev-parse", "HEAD") + git(t, wt, "status", "--porcelain"); after != before {
		t.Errorf("switching the main checkout changed the docs worktree: %q → %q", before, after)
	}
	if head := strings.TrimSpace(git(t, wt, "branch", "--show-current")); head != "helix-design-docs" {
		t.Errorf("docs worktree is on %q", head)
	}
	git(t, repo, "checkout", "-q", "main")
}

// wantStates checks the task's stream: every state, in order (the items'
// moves between them aside).
func wantStates(t *testing.T, st *store.Store) {
	t.Helper()
	evs, err := st.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{domain.TaskStream("t-greeter")}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ev := range evs {
		var tr struct{ To string }
		json.Unmarshal(ev.Message.Extra, &tr)
		if tr.To != "" {
			got = append(got, tr.To)
		}
	}
	want := "exploration spec_generation spec_review spec_revision spec_review spec_approved implementation_queued implementation implementation_review done"
	if strings.Join(got, " ") != want {
		t.Errorf("states = %v\nwant     %s", got, want)
	}
}

// wantOrder checks that items 1 and 2 overlapped and that 3 and 4 each
// started only after their blockers were done.
func wantOrder(t *testing.T, items []domain.TaskItem) {
	t.Helper()
	if len(items) != 4 {
		t.Fatalf("items = %+v, want 4", items)
	}
	at := func(seq int) domain.TaskItem { return items[seq-1] }
	for _, it := range items {
		if it.State != domain.ItemDone || it.StartedAt == nil || it.FinishedAt == nil {
			t.Fatalf("item %d = %+v, want done with times", it.Seq, it)
		}
	}
	one, two := at(1), at(2)
	if !one.StartedAt.Before(*two.FinishedAt) || !two.StartedAt.Before(*one.FinishedAt) {
		t.Errorf("items 1 (%v–%v) and 2 (%v–%v) did not overlap", one.StartedAt, one.FinishedAt, two.StartedAt, two.FinishedAt)
	}
	if one.Worker == two.Worker {
		t.Errorf("items 1 and 2 both went to %s", one.Worker)
	}
	for _, it := range items {
		for _, b := range it.BlockedBy {
			if it.StartedAt.Before(*at(b).FinishedAt) {
				t.Errorf("item %d started %v, before its blocker %d finished %v", it.Seq, it.StartedAt, b, at(b).FinishedAt)
			}
		}
	}
}

// wantForwardOnly checks the docs branch's reflog: every position of the
// branch is a descendant of the one before it.
func wantForwardOnly(t *testing.T, repo string) {
	t.Helper()
	log := strings.Fields(git(t, repo, "reflog", "show", "--format=%H", "refs/heads/helix-design-docs"))
	if len(log) < 6 {
		t.Fatalf("design-docs reflog has %d entries, want a commit per change:\n%s", len(log), log)
	}
	for i := len(log) - 1; i > 0; i-- {
		if _, err := exec.Command("git", "-C", repo, "merge-base", "--is-ancestor", log[i], log[i-1]).CombinedOutput(); err != nil {
			t.Errorf("design-docs moved from %s to %s, not a descendant", log[i], log[i-1])
		}
	}
	if parents := strings.Fields(git(t, repo, "rev-list", "--min-parents=2", "helix-design-docs")); len(parents) > 0 {
		t.Errorf("merge commits on helix-design-docs: %v", parents)
	}
}
