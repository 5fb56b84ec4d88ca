package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/agent/llm"
	"github.com/helixml/helix-org/agent/llm/llmtest"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/tools"
)

// TestSpecTaskSurvivesSIGKILL runs the greeter task on the real binary,
// kills it with SIGKILL while both builders are in the middle of items 1
// and 2, and restarts it: the cut-off runs are run again by the same
// builders, no item is handed to a second worker or committed twice, and
// the task finishes.
func TestSpecTaskSurvivesSIGKILL(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	repo := greeterRepo(t)
	gate := filepath.Join(repo, ".git", "demo-release") // in the repository the builders' sandboxes share
	fake := llmtest.New(t, llm.Anthropic, specTaskScript(repo, gate))
	db, envs, addr := filepath.Join(dir, "helix-org.db"), filepath.Join(dir, "envs"), freeAddr(t)
	ctx := t.Context()
	st, err := store.Open(ctx, db, store.Options{Transports: transports.Specs()})
	if err != nil {
		t.Fatal(err)
	}
	st.Bootstrap(ctx, tools.Names())
	st.SetSetting(ctx, agent.RuntimeSetting, agent.RuntimeBuiltin)
	useFake(t, st, llm.Anthropic, fake)
	st.SetSetting(ctx, agent.BashSetting, `{"workers":["w-b1","w-b2"]}`)
	shareWithAgents(t, st, repo)
	st.SetSetting(ctx, tools.SpecRepoRootsSetting, filepath.Dir(repo))
	tok := servertest.Token(t, st, "w-owner")
	st.Close()
	os.MkdirAll(envs, 0o700)

	srv := startBinary(t, db, envs, addr)
	owner, err := servertest.Dial(t, "http://"+addr+"/workers/w-owner/mcp", tok)
	if err != nil {
		t.Fatal(err)
	}
	fill := strings.NewReplacer("<repo>", repo)
	for _, c := range readmeCalls(t, "../../demos/spec-tasks/README.md", "## 3. Set up the team") {
		callJSON(t, owner, c.tool, fill.Replace(c.args))
	}
	st, err = store.Open(ctx, db, store.Options{Transports: transports.Specs()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	state := func() domain.TaskState {
		view, err := st.GetSpecTask(ctx, "t-greeter")
		if err != nil {
			t.Fatal(err)
		}
		return view.Task.State
	}
	until(t, 60*time.Second, "the spec", func() bool { return state() == domain.TaskSpecReview })
	reviews := readmeCalls(t, "../../demos/spec-tasks/README.md", "## 4. Review")
	callJSON(t, owner, reviews[0].tool, reviews[0].args)
	until(t, 60*time.Second, "the revised spec, and the planner's run over", func() bool {
		view, err := st.GetSpecTask(ctx, "t-greeter")
		running, err2 := st.RunningActivations(ctx)
		return err == nil && err2 == nil && view.Task.State == domain.TaskSpecReview && len(view.Items) == 4 && len(running) == 0
	})
	callJSON(t, owner, reviews[1].tool, reviews[1].args)
	t.Cleanup(func() { // what the runs and items were, when it failed
		if !t.Failed() {
			return
		}
		for _, w := range []string{"w-planner", "w-b1", "w-b2"} {
			acts, _ := st.ListActivations(context.Background(), w)
			for _, a := range acts {
				t.Logf("%s %s %s %s", w, a.ID, a.Status, a.Error)
			}
		}
		view, _ := st.GetSpecTask(context.Background(), "t-greeter")
		t.Logf("%+v %+v", view.Task, view.Items)
	})
	until(t, 60*time.Second, "both builders in the middle of items 1 and 2", func() bool {
		_, err1 := os.Stat(filepath.Join(repo, ".git", "demo-started-1"))
		_, err2 := os.Stat(filepath.Join(repo, ".git", "demo-started-2"))
		return err1 == nil && err2 == nil
	})
	srv.Process.Signal(syscall.SIGKILL)
	srv.Wait()

	srv = startBinary(t, db, envs, addr)
	os.WriteFile(gate, nil, 0o600)
	until(t, 90*time.Second, "the work to be done", func() bool { return state() == domain.TaskImplementationReview })
	owner, err = servertest.Dial(t, "http://"+addr+"/workers/w-owner/mcp", tok)
	if err != nil {
		t.Fatal(err)
	}
	callJSON(t, owner, "review_spec", `{"task": "t-greeter", "approve": true}`)

	view, err := st.GetSpecTask(ctx, "t-greeter")
	if err != nil {
		t.Fatal(err)
	}
	if view.Task.State != domain.TaskDone {
		t.Errorf("state = %s, want done", view.Task.State)
	}
	for _, it := range view.Items {
		if it.State != domain.ItemDone || it.Handouts != 1 {
			t.Errorf("item %d = %s after %d handouts, want done after one", it.Seq, it.State, it.Handouts)
		}
	}
	log := git(t, repo, "log", "--format=%an %s", "feature/t-greeter")
	for _, item := range []string{"item 1", "item 2", "item 3", "item 4"} {
		if n := strings.Count(log, item+"\n"); n != 1 {
			t.Errorf("%q committed %d times on the feature branch:\n%s", item, n, log)
		}
	}
	var interrupted int
	for _, w := range []string{"w-b1", "w-b2"} {
		acts, err := st.ListActivations(ctx, w)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range acts {
			if a.Status == domain.ActivationInterrupted {
				interrupted++
			}
		}
	}
	if interrupted != 2 {
		t.Errorf("interrupted builder runs = %d, want the two SIGKILL cut off", interrupted)
	}
	srv.Process.Signal(syscall.SIGTERM)
	srv.Wait()
}
