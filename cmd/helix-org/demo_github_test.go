package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/transports/github"
)

const ghSecret = "gh-webhook-secret-e2e-6b1f"

// TestDemoGitHub is demos/github/README.md end to end through the real
// server and dispatcher: a signed issue delivery, as GitHub sends it,
// wakes the docs engineer following the repository, and not the worker
// following another repository. The agent is `cat`, so each run's log is
// exactly the prompt the worker was given.
func TestDemoGitHub(t *testing.T) {
	st := demoStore(t)
	ctx := t.Context()
	for _, s := range []struct {
		spec  domain.SettingSpec
		value string
	}{
		{github.ConfigSetting, `{"webhook_secret":"` + ghSecret + `"}`},
		{agent.RuntimeSetting, agent.RuntimeCommand},
		{agent.CommandSetting, "cat"},
	} {
		if err := st.SetSetting(ctx, s.spec, s.value); err != nil {
			t.Fatal(err)
		}
	}
	logs := &demoLogBuffer{}
	base, _, owner := startServe(t, st, logs)
	hook := base + "/github/webhook"

	// README step 3, plus a second repository's stream and worker.
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"create_role", map[string]any{"id": "r-docs", "title": "Docs engineer", "content": demoRole(t, "github")}},
		{"create_position", map[string]any{"id": "p-docs", "role": "r-docs", "title": "Docs engineer"}},
		{"create_stream", map[string]any{"id": "s-docs-issues", "name": "docs issues", "transport": map[string]any{"kind": "github",
			"config": map[string]any{"repo": "helixml/docs", "events": []string{"issues", "issue_comment", "pull_request"}}}}},
		{"create_stream", map[string]any{"id": "s-api-issues", "name": "api issues", "transport": map[string]any{"kind": "github",
			"config": map[string]any{"repo": "helixml/api", "events": []string{"issues"}}}}},
		{"hire_worker", map[string]any{"id": "w-docs", "position": "p-docs", "kind": "ai", "name": "Docs", "grants": []string{"read_events"}}},
		{"hire_worker", map[string]any{"id": "w-api", "position": "p-docs", "kind": "ai", "name": "API docs", "grants": []string{"read_events"}}},
		{"invite_workers", map[string]any{"stream": "s-docs-issues", "workers": []string{"w-docs", "w-owner"}}},
		{"invite_workers", map[string]any{"stream": "s-api-issues", "workers": []string{"w-api"}}},
	} {
		servertest.Call[map[string]any](t, owner, c.tool, c.args)
	}
	waitIdle(t, st)

	issue, err := os.ReadFile(filepath.Join("..", "..", "transports", "github", "testdata", "issues.json"))
	if err != nil {
		t.Fatal(err)
	}
	headers := func(event, delivery, sig string) map[string]string {
		return map[string]string{"X-GitHub-Event": event, "X-GitHub-Delivery": delivery, "X-GitHub-Hook-ID": "109948940",
			"User-Agent": "GitHub-Hookshot/044aadd", github.SignatureHeader: sig}
	}
	ping := []byte(`{"zen":"Design for failure.","hook_id":109948940,"repository":{"full_name":"helixml/docs"}}`)
	if code, body := demoPost(t, hook, ping, headers("ping", "d-ping", github.Sign(ghSecret, ping)), "", ""); code != 200 {
		t.Fatalf("ping: %d %s", code, body)
	}
	apiActs := demoActivations(t, st, "w-api")

	// README step 4: an issue is opened on helixml/docs.
	if code, body := demoPost(t, hook, issue, headers("issues", "72d3162e-cc78-11e3-81ab-4c9367dc0958", github.Sign(ghSecret, issue)), "", ""); code != 200 {
		t.Fatalf("issue delivery: %d %s", code, body)
	}
	waitIdle(t, st)
	evs := demoEvents(t, st, "s-docs-issues")
	if len(evs) != 1 {
		t.Fatalf("s-docs-issues holds %d events, want 1", len(evs))
	}
	prompt := demoWorkerLog(t, st, "w-docs")
	for _, want := range []string{"event " + evs[0].ID + " on stream s-docs-issues", "subject: Install guide skips the key file",
		"threadId: #42", "from: octocat", "Step 3 never says where helix-org.db.key lives."} {
		if !strings.Contains(prompt, want) {
			t.Errorf("the docs engineer's prompt lacks %q:\n%s", want, prompt)
		}
	}
	if n := demoActivations(t, st, "w-api"); n != apiActs || strings.Contains(demoWorkerLog(t, st, "w-api"), evs[0].ID) {
		t.Errorf("the worker on helixml/api was woken by a helixml/docs issue (%d runs, was %d)", n, apiActs)
	}

	// Refused or unmatched deliveries: the right status, nothing stored or woken.
	other := []byte(strings.Replace(string(issue), `"full_name": "helixml/docs"`, `"full_name": "someone/else"`, 1))
	cases := []struct {
		name    string
		body    []byte
		headers map[string]string
		want    int
	}{
		{"bad signature", issue, headers("issues", "d-2", github.Sign("guess", issue)), 401},
		{"missing signature", issue, headers("issues", "d-2", ""), 401},
		{"malformed JSON", []byte(`{"action":`), headers("issues", "d-2", github.Sign(ghSecret, []byte(`{"action":`))), 400},
		{"unknown repository", other, headers("issues", "d-2", github.Sign(ghSecret, other)), 202},
		{"redelivery", issue, headers("issues", "72d3162e-cc78-11e3-81ab-4c9367dc0958", github.Sign(ghSecret, issue)), 200},
	}
	seq, _ := st.LastSeq(ctx)
	docsActs := demoActivations(t, st, "w-docs")
	for _, c := range cases {
		code, body := demoPost(t, hook, c.body, c.headers, "", "")
		if code != c.want {
			t.Errorf("%s: %d %s, want %d", c.name, code, body, c.want)
		}
	}
	if after, _ := st.LastSeq(ctx); after != seq {
		t.Errorf("refused or repeated deliveries stored %d events", after-seq)
	}
	if n, _ := st.PendingTriggers(ctx); n != 0 || demoActivations(t, st, "w-docs") != docsActs {
		t.Errorf("refused or repeated deliveries woke someone (%d pending)", n)
	}
	if strings.Contains(logs.String(), ghSecret) {
		t.Error("the webhook secret is in the server's log")
	}
}
