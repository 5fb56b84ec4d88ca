package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/agent/llm"
	"github.com/helixml/helix-org/agent/llm/llmtest"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/safedial"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/tools"
	"github.com/helixml/helix-org/transports/github"
	"github.com/helixml/helix-org/transports/github/githubtest"
)

const reviewAnswer = "Good point: the guide now says to back the key up with the database."

// prEngineer is the scripted model of roles/pr-engineer.md: for an issue
// it fixes the guide in its workspace, opens a pull request and replies
// with its URL; for a review comment it answers on the comment's thread.
func prEngineer(turn llmtest.Turn) llmtest.Reply {
	trigs := llmtest.Triggers(turn.Prompt())
	if len(trigs) == 0 || !strings.HasPrefix(trigs[0].ThreadID, "#") || trigs[0].Source != "" {
		return llmtest.Reply{Text: "Nothing to work on."}
	}
	tr := trigs[0]
	n := strings.TrimPrefix(tr.ThreadID, "#")
	if n != "42" { // a review comment on the pull request
		if turn.CallsTo("publish") == 0 {
			return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("publish", map[string]any{"stream": tr.Stream, "inReplyTo": tr.Event, "body": reviewAnswer})}}
		}
		return llmtest.Reply{Text: "Answered the review."}
	}
	switch {
	case turn.CallsTo("bash") == 0:
		script := fmt.Sprintf(`set -e
cd "$HELIX_ORG_WORKSPACE"
printf '\n%s\n' >> docs/install.md`, keyLine)
		return llmtest.Reply{Text: "Fixing the install guide.", ToolCalls: []llm.ToolCall{llmtest.Call("bash", map[string]any{"command": script})}}
	case turn.CallsTo("open_pull_request") == 0:
		return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("open_pull_request", map[string]any{
			"title": "install: say where the database key lives (fixes #" + n + ")", "body": "Fixes #" + n + "."})}}
	case turn.CallsTo("publish") == 0:
		res := turn.Results()[len(turn.Results())-1]
		var pr struct{ URL string }
		body := "I could not open a pull request: " + res.Content
		if json.Unmarshal([]byte(res.Content), &pr) == nil && pr.URL != "" {
			body = "Opened " + pr.URL + ": docs/install.md now says where helix-org.db.key lives."
		}
		return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("publish", map[string]any{"stream": tr.Stream, "inReplyTo": tr.Event, "body": body})}}
	}
	return llmtest.Reply{Text: "Reported on the issue."}
}

// TestDemoGitHubPullRequest: an issue delivery wakes the engineer (the
// built-in agent, scripted), which fixes the guide in its workspace — a
// checkout of the attached repository — and calls open_pull_request: the
// server pushes helix/w-engineer to the origin and opens the pull request
// on a fake GitHub with its own token; the engineer's reply with its URL
// becomes a comment on the issue. A review comment on the pull request
// wakes it again, and its answer is a comment on the pull request.
func TestDemoGitHubPullRequest(t *testing.T) {
	t.Parallel()
	fake := llmtest.New(t, llm.Anthropic, prEngineer)
	st := demoStore(t)
	gh := githubtest.New(t, ghToken)
	gh.Issue("helixml/docs", 42)
	gh.Issue("helixml/docs", 101) // the pull request the fake opens first
	origin := docsRepo(t)
	for _, s := range []struct {
		spec  domain.SettingSpec
		value string
	}{
		{github.ConfigSetting, `{"webhook_secret":"` + ghSecret + `","token":"` + ghToken + `","api_url":"` + gh.URL + `"}`},
		{tools.GitHubTokenSetting, ghToken},
		{tools.GitHubAPISetting, gh.URL},
		{safedial.AllowPrivateSetting, "true"}, // the fake GitHub is on loopback
		{tools.SpecRepoRootsSetting, filepath.Dir(origin)},
		{tools.SpecClonesDirSetting, t.TempDir()},
		{agent.RuntimeSetting, agent.RuntimeBuiltin},
		{agent.BashSetting, `{"workers":["w-engineer"]}`},
	} {
		if err := st.SetSetting(t.Context(), s.spec, s.value); err != nil {
			t.Fatal(err)
		}
	}
	useFake(t, st, llm.Anthropic, fake)
	base, envs, owner := startServe(t, st, io.Discard)
	demoTrace(t, st, "w-engineer")
	role, err := os.ReadFile(filepath.Join("..", "..", "demos", "github-engineer", "roles", "pr-engineer.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"create_stream", map[string]any{"id": "s-issues", "name": "docs issues", "transport": map[string]any{"kind": "github",
			"config": map[string]any{"repo": "helixml/docs", "events": []string{"issues", "pull_request_review_comment"}}}}},
		{"create_role", map[string]any{"id": "r-engineer", "title": "Software engineer", "content": string(role)}},
		{"create_position", map[string]any{"id": "p-engineer", "role": "r-engineer", "title": "Software engineer, docs"}},
		{"hire_worker", map[string]any{"id": "w-engineer", "position": "p-engineer", "kind": "ai", "name": "Engineer", "grants": []string{"publish", "read_events", "open_pull_request"}}},
		{"attach_repository", map[string]any{"worker": "w-engineer", "url": "file://" + origin, "forge": "github", "project": "helixml/docs"}},
		{"invite_workers", map[string]any{"stream": "s-issues", "workers": []string{"w-engineer", "w-owner"}}},
	} {
		servertest.Call[map[string]any](t, owner, c.tool, c.args)
	}
	waitIdle(t, st)

	deliver := func(event, delivery string, payload []byte) {
		t.Helper()
		headers := map[string]string{"X-GitHub-Event": event, "X-GitHub-Delivery": delivery, "User-Agent": "GitHub-Hookshot/044aadd",
			github.SignatureHeader: github.Sign(ghSecret, payload)}
		if code, body := demoPost(t, base+"/github/webhook", payload, headers, "", ""); code != 200 {
			t.Fatalf("%s delivery: %d %s", event, code, body)
		}
	}
	issue, err := os.ReadFile(filepath.Join("..", "..", "transports", "github", "testdata", "issues.json"))
	if err != nil {
		t.Fatal(err)
	}
	deliver("issues", "72d3162e-cc78-11e3-81ab-4c9367dc0958", issue)
	comment := gh.Next(t)
	waitIdle(t, st)

	pulls := gh.Pulls()
	if len(pulls) != 1 || pulls[0].Repo != "helixml/docs" || pulls[0].Head != "helix/w-engineer" || pulls[0].Base != "main" || pulls[0].Token != ghToken ||
		pulls[0].Title != "install: say where the database key lives (fixes #42)" {
		t.Fatalf("pull requests opened = %+v; want one of helix/w-engineer into main with the server's token", pulls)
	}
	if comment.Issue != 42 || comment.Body != "Opened https://github.com/helixml/docs/pull/101: docs/install.md now says where helix-org.db.key lives." {
		t.Errorf("comment on the issue = %+v", comment)
	}
	if diff := gitOut(t, origin, "diff", "main", "helix/w-engineer"); !strings.Contains(diff, "+"+keyLine) {
		t.Errorf("the fix is not on the pushed branch:\n%s", diff)
	}
	if got := gitOut(t, origin, "log", "-1", "--format=%an <%ae>", "helix/w-engineer"); got != "Engineer <w-engineer@helix-org.local>\n" {
		t.Errorf("the pushed commit's author = %q, want the worker", got)
	}
	// The agent could read its directory: no forge token in it.
	filepath.WalkDir(filepath.Join(envs, "w-engineer"), func(path string, d os.DirEntry, err error) error {
		if b, _ := os.ReadFile(path); err == nil && !d.IsDir() && strings.Contains(string(b), ghToken) {
			t.Errorf("the forge token is in %s", path)
		}
		return nil
	})

	// A review comment on the pull request wakes the engineer again.
	var review map[string]any
	raw, err := os.ReadFile(filepath.Join("..", "..", "transports", "github", "testdata", "pull_request_review_comment.json"))
	if err != nil {
		t.Fatal(err)
	}
	json.Unmarshal(raw, &review)
	review["repository"].(map[string]any)["full_name"] = "helixml/docs"
	review["pull_request"].(map[string]any)["number"] = 101
	review["comment"].(map[string]any)["body"] = "Also say to back the key up with the database."
	payload, _ := json.Marshal(review)
	deliver("pull_request_review_comment", "a1b2c3d4-0000-11ef-8000-000000000101", payload)
	answer := gh.Next(t)
	waitIdle(t, st)
	if answer.Issue != 101 || answer.Body != reviewAnswer {
		t.Errorf("answer to the review = %+v; want %q on #101", answer, reviewAnswer)
	}
}
