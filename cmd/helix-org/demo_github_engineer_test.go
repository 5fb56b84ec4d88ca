package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/agent/llm"
	"github.com/helixml/helix-org/agent/llm/llmtest"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/safedial"
	"github.com/helixml/helix-org/transports/github"
	"github.com/helixml/helix-org/transports/github/githubtest"
)

const (
	ghToken = "ghp_demo_engineer_token_5e2b"
	keyLine = "The database key lives beside the database, in helix-org.db.key: back the two up together."
)

// engineer is the scripted model of demos/github-engineer/roles/engineer.md:
// for an issue it fixes the install guide with git in its clone, pushes
// the branch, and reports the branch and commit on the issue.
func engineer(turn llmtest.Turn) llmtest.Reply {
	trigs := llmtest.Triggers(turn.Prompt())
	if len(trigs) == 0 || !strings.HasPrefix(trigs[0].ThreadID, "#") {
		return llmtest.Reply{Text: "No issue to work on."}
	}
	issue := trigs[0]
	n := strings.TrimPrefix(issue.ThreadID, "#")
	branch := "fix/issue-" + n
	switch {
	case turn.CallsTo("bash") == 0:
		script := fmt.Sprintf(`set -e
cd repo
git fetch -q origin
git checkout -q -b %[1]s origin/main
printf '\n%[2]s\n' >> docs/install.md
git -c user.name=Engineer -c user.email=w-engineer@helix-org.invalid commit -qam 'install: say where the database key lives (fixes #%[3]s)'
git push -q origin %[1]s
git rev-parse --short HEAD`, branch, keyLine, n)
		return llmtest.Reply{Text: "Fixing the install guide on a branch.", ToolCalls: []llm.ToolCall{llmtest.Call("bash", map[string]any{"command": script})}}
	case turn.CallsTo("publish") == 0:
		res := turn.Results()[0]
		body := "I could not push a fix: " + res.Content
		if !res.IsError {
			sha := strings.TrimSpace(res.Content)
			body = fmt.Sprintf("Fixed on branch `%s` (commit %s): docs/install.md now says where helix-org.db.key lives. Ready for review.", branch, sha)
		}
		return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("publish", map[string]any{"stream": issue.Stream, "inReplyTo": issue.Event, "body": body})}}
	}
	return llmtest.Reply{Text: "Reported on the issue."}
}

// TestDemoGitHubEngineer is demos/github-engineer/README.md end to end: a
// signed issue delivery wakes the engineer (built-in agent, bash on, the
// model scripted by engineer), which commits a fix on a branch of its
// clone with real git, pushes it to the origin repository, and reports the
// branch and commit as a comment on the issue through a fake GitHub API.
func TestDemoGitHubEngineer(t *testing.T) {
	t.Parallel()
	fake := llmtest.New(t, llm.Anthropic, engineer)
	st := demoStore(t)
	gh := githubtest.New(t, ghToken)
	gh.Issue("helixml/docs", 42)
	for _, s := range []struct {
		spec  domain.SettingSpec
		value string
	}{
		{github.ConfigSetting, `{"webhook_secret":"` + ghSecret + `","token":"` + ghToken + `","api_url":"` + gh.URL + `"}`},
		{safedial.AllowPrivateSetting, "true"}, // the fake GitHub is on loopback
		{agent.RuntimeSetting, agent.RuntimeBuiltin},
		{agent.BashSetting, `{"workers":["w-engineer"]}`},
	} {
		if err := st.SetSetting(t.Context(), s.spec, s.value); err != nil {
			t.Fatal(err)
		}
	}
	useFake(t, st, llm.Anthropic, fake)
	base, envs, _ := startServe(t, st, io.Discard)
	demoTrace(t, st, "w-engineer")
	origin := docsRepo(t)
	shareWithAgents(t, st, origin) // README step 1: the sandbox shares the origin
	runSetup(t, st, base, "github-engineer", "ORIGIN="+origin, "HELIX_ORG_ENVS_DIR="+envs, "GITHUB_REPO=helixml/docs")
	waitIdle(t, st)

	// README step 4: the issue is opened.
	issue, err := os.ReadFile(filepath.Join("..", "..", "transports", "github", "testdata", "issues.json"))
	if err != nil {
		t.Fatal(err)
	}
	headers := map[string]string{"X-GitHub-Event": "issues", "X-GitHub-Delivery": "72d3162e-cc78-11e3-81ab-4c9367dc0958",
		"User-Agent": "GitHub-Hookshot/044aadd", github.SignatureHeader: github.Sign(ghSecret, issue)}
	if code, body := demoPost(t, base+"/github/webhook", issue, headers, "", ""); code != 200 {
		t.Fatalf("issue delivery: %d %s", code, body)
	}
	comment := gh.Next(t)
	waitIdle(t, st)

	head := strings.TrimSpace(gitOut(t, origin, "rev-parse", "--short", "fix/issue-42"))
	if comment.Repo != "helixml/docs" || comment.Issue != 42 || comment.Token != ghToken ||
		comment.Body != "Fixed on branch `fix/issue-42` (commit "+head+"): docs/install.md now says where helix-org.db.key lives. Ready for review." {
		t.Errorf("comment = %+v; want the branch and commit %s on helixml/docs#42", comment, head)
	}
	if got := gitOut(t, origin, "log", "-1", "--format=%an <%ae>: %s", "fix/issue-42"); got != "Engineer <w-engineer@helix-org.invalid>: install: say where the database key lives (fixes #42)\n" {
		t.Errorf("the branch's commit: %q", got)
	}
	if diff := gitOut(t, origin, "diff", "main", "fix/issue-42"); !strings.Contains(diff, "+"+keyLine) {
		t.Errorf("the fix is not on the branch:\n%s", diff)
	}
	if main := gitOut(t, origin, "log", "--format=%s", "main"); main != "Install guide\n" {
		t.Errorf("main moved: %q", main)
	}
	evs := demoEvents(t, st, "s-issues")
	if len(evs) != 2 || evs[1].Source != "w-engineer" || evs[1].Message.InReplyTo != evs[0].ID {
		t.Errorf("s-issues holds %+v; want the issue and the engineer's reply to it", evs)
	}
}

// docsRepo is the origin: a bare repository whose main holds the install
// guide the issue is about.
func docsRepo(t *testing.T) string {
	t.Helper()
	work, origin := t.TempDir(), filepath.Join(t.TempDir(), "docs.git")
	os.MkdirAll(filepath.Join(work, "docs"), 0o755)
	os.WriteFile(filepath.Join(work, "docs", "install.md"), []byte("# Install\n\n3. Run `helix-org bootstrap --init`.\n"), 0o644)
	gitOut(t, work, "init", "-q", "-b", "main")
	gitOut(t, work, "add", ".")
	gitOut(t, work, "-c", "user.name=Docs", "-c", "user.email=docs@example.com", "commit", "-qm", "Install guide")
	gitOut(t, "", "clone", "-q", "--bare", work, origin)
	return origin
}

func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}
