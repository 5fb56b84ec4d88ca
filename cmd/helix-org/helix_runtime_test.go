package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/agent/helix"
	"github.com/helixml/helix-org/agent/helix/helixtest"
	"github.com/helixml/helix-org/dispatch"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/safedial"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/tools"
)

// helixOrg is an org whose AI workers run on the fake Helix: agent.runtime
// helix, helix.* pointing at it, retries after a failed start quick.
func helixOrg(t *testing.T, fake *helixtest.Server, provider string) *store.Store {
	t.Helper()
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "helix-org.db"), store.Options{Transports: transports.Specs(), Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ctx := t.Context()
	if _, err := st.Bootstrap(ctx, tools.Names()); err != nil {
		t.Fatal(err)
	}
	for _, kv := range []struct {
		spec domain.SettingSpec
		v    string
	}{{agent.RuntimeSetting, agent.RuntimeHelix}, {helix.URLSetting, fake.URL}, {helix.APIKeySetting, fake.Key}, {helix.ProviderSetting, provider},
		{helix.ModelSetting, "qwen3:8b"}, {helix.PollSetting, "10ms"}, {safedial.AllowPrivateSetting, "true"}, {dispatch.StartBackoffSetting, "50ms"}} {
		if err := st.SetSetting(ctx, kv.spec, kv.v); err != nil {
			t.Fatal(err)
		}
	}
	st.CreateRole(ctx, "w-owner", domain.Role{ID: "r-helper", Title: "Helper", Content: "Answer every message on s-inbox."})
	st.CreatePosition(ctx, "w-owner", domain.Position{ID: "p-helper", RoleID: "r-helper", Title: "Helper"})
	st.CreateStream(ctx, "w-owner", domain.Stream{ID: "s-inbox", Name: "inbox", Transport: domain.Transport{Kind: domain.TransportLocal}})
	return st
}

// helixAgent stands in for the agent in a worker's Helix desktop: it
// reaches the org through the MCP server on its app, authorised by the
// app's secret, and replies on s-inbox to the prompt's last event.
func helixAgent(ctx context.Context, p helixtest.Prompt) string {
	token, _ := strings.CutPrefix(p.MCPHeaders["Authorization"], "Bearer ")
	client := mcp.NewClient(&mcp.Implementation{Name: "helix-desktop", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: p.MCPURL,
		HTTPClient: &http.Client{Transport: servertest.BearerTransport{Token: token}}}, nil)
	if err != nil {
		return "cannot reach the org: " + err.Error()
	}
	defer cs.Close()
	body := "hired"
	if i := strings.LastIndex(p.Text, "ping "); i >= 0 {
		body = "pong " + strings.Fields(p.Text[i+5:])[0]
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "publish", Arguments: map[string]any{"stream": "s-inbox", "body": body}})
	if err != nil || res.IsError {
		return fmt.Sprintf("publish failed: %v %s", err, servertest.Text(res))
	}
	return "published " + body
}

// TestHelixRuntimeThroughServe: through serve's dispatcher, a hire makes
// the worker's Helix project, app and repository and opens its session;
// the next message goes through that session's queue, with no new chat;
// a role edit reaches the helix-specs branch as it is made; the agent
// in Helix acts on the org through the MCP endpoint and token it was
// given.
func TestHelixRuntimeThroughServe(t *testing.T) {
	fake := helixtest.Start(t)
	fake.Agent = helixAgent
	st := helixOrg(t, fake, "helix")
	ctx := t.Context()
	if _, err := st.HireWorker(ctx, "w-owner", domain.Worker{ID: "w-helper", Kind: domain.WorkerAI, PositionID: "p-helper", Name: "Helper"}, []string{"publish"}); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"w-helper", "w-owner"} {
		if _, err := st.Subscribe(ctx, "w-owner", "s-inbox", w); err != nil {
			t.Fatal(err)
		}
	}
	_, _, owner := startServe(t, st, io.Discard)
	waitIdle(t, st)
	project, app, repo, ok := fake.ProjectOf("w-helper")
	if !ok || app == "" || repo == "" {
		t.Fatalf("hire made project %q, app %q, repo %q (found %v); want all three", project, app, repo, ok)
	}
	if role, _ := fake.File(repo, helix.SpecsBranch, "workers/w-helper/.context/role.md"); !strings.Contains(role, "Answer every message on s-inbox.") {
		t.Errorf("role on helix-specs = %q", role)
	}

	ping := servertest.Call[domain.Event](t, owner, "publish", map[string]any{"stream": "s-inbox", "body": "ping 1"})
	if reply := waitForReply(t, owner, "s-inbox", "w-helper", ping.Seq); reply.Message.Body != "pong 1" {
		t.Errorf("reply = %q, want pong 1", reply.Message.Body)
	}
	waitIdle(t, st)
	if n, m, s := fake.Count("POST /api/v1/sessions/chat"), fake.Count("POST /api/v1/sessions/{id}/messages"), fake.Sessions(); n != 1 || m != 1 || s != 1 {
		t.Errorf("chats %d, queued messages %d, sessions %d; want 1, 1, 1", n, m, s)
	}

	// The edit reaches helix-specs as it is made, before any run.
	before, _ := st.HelixWorkspace(ctx, "w-helper")
	servertest.Call[map[string]any](t, owner, "update_role", map[string]any{"id": "r-helper", "content": "Answer every message on s-inbox, briefly."})
	deadline := time.After(30 * time.Second)
	for {
		changed := st.Changed()
		if ws, _ := st.HelixWorkspace(ctx, "w-helper"); ws.SpecsSum != before.SpecsSum {
			break
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatal("update_role was not pushed to helix-specs")
		}
	}
	if role, _ := fake.File(repo, helix.SpecsBranch, "workers/w-helper/.context/role.md"); !strings.Contains(role, "briefly.") {
		t.Errorf("role on helix-specs after update_role = %q", role)
	}
	puts := fake.Count("PUT /api/v1/git/repositories/{id}/contents")
	ping2 := servertest.Call[domain.Event](t, owner, "publish", map[string]any{"stream": "s-inbox", "body": "ping 2"})
	waitForReply(t, owner, "s-inbox", "w-helper", ping2.Seq)
	waitIdle(t, st)
	if n := fake.Count("PUT /api/v1/git/repositories/{id}/contents"); n != puts {
		t.Errorf("the run after the edit put %d files again; want none, the edit was pushed", n-puts)
	}
	acts, _ := st.ListActivations(ctx, "w-helper")
	if len(acts) != 3 {
		t.Fatalf("activations = %+v; want 3", acts)
	}
	for _, a := range acts {
		if a.Status != domain.ActivationSucceeded {
			t.Errorf("activation %s: %s %s", a.ID, a.Status, a.Error)
		}
	}
	wantAll(t, "activation log", logText(t, st, "w-helper"), "assistant: published hired", "assistant: published pong 1",
		"prompt queued on Helix session", "role and identity put on helix-specs")
}

// TestHelixColdStartIsRequeued: the hire's chat meets a desktop whose
// agent is not connected yet; the dispatcher requeues the run, and the
// retry queues the prompt on the session the chat opened.
func TestHelixColdStartIsRequeued(t *testing.T) {
	fake := helixtest.Start(t)
	fake.Agent, fake.ColdStarts = helixAgent, 1
	st := helixOrg(t, fake, "helix")
	ctx := t.Context()
	if _, err := st.HireWorker(ctx, "w-owner", domain.Worker{ID: "w-helper", Kind: domain.WorkerAI, PositionID: "p-helper", Name: "Helper"}, []string{"publish"}); err != nil {
		t.Fatal(err)
	}
	startServe(t, st, io.Discard)
	waitIdle(t, st)
	acts, _ := st.ListActivations(ctx, "w-helper")
	if len(acts) != 2 || acts[0].Status != domain.ActivationFailed || !strings.Contains(acts[0].Error, "did not start") || acts[1].Status != domain.ActivationSucceeded {
		t.Fatalf("activations = %+v; want one that did not start, then one that succeeded", acts)
	}
	if n, m, s := fake.Count("POST /api/v1/sessions/chat"), fake.Count("POST /api/v1/sessions/{id}/messages"), fake.Sessions(); n != 1 || m != 1 || s != 1 {
		t.Errorf("chats %d, queued messages %d, sessions %d; want 1, 1, 1", n, m, s)
	}
	wantAll(t, "activation log", logText(t, st, "w-helper"), "is not connected yet", "retry:", "assistant: published hired")
}

// TestServeRefusesAProviderHelixLacks: on agent.runtime helix, serve does
// not start when Helix has no such provider, and says which key to fix.
func TestServeRefusesAProviderHelixLacks(t *testing.T) {
	fake := helixtest.Start(t)
	st := helixOrg(t, fake, "anthropic")
	err := serveOn(t.Context(), nil, st, serveConfig{}, nil)
	want := `agent.runtime is helix, and Helix cannot take its runs: helix.provider "anthropic" is not a provider Helix has (it has: helix): ` +
		"fix it with `helix-org config set helix.provider <provider>`"
	if err == nil || err.Error() != want {
		t.Errorf("serve = %v\nwant %s", err, want)
	}
	if fake.Count("POST /api/v1/sessions/chat") != 0 || fake.Projects() != 0 {
		t.Error("serve reached Helix beyond its check")
	}
}

// TestBootstrapHelixRuntime: `bootstrap helix-runtime` says who the key
// is and that the provider and model exist, or which key to fix.
func TestBootstrapHelixRuntime(t *testing.T) {
	fake := helixtest.Start(t)
	tests := []struct {
		name    string
		config  [][2]string
		want    []string
		wantErr string
	}{
		{"good, runtime not chosen yet", [][2]string{{"helix.model", "qwen3:8b"}},
			[]string{"Helix at " + fake.URL + " answers for usr_tester (helix.url, helix.api_key)", "provider helix and model qwen3:8b are on Helix",
				"run activations on Helix with `helix-org config set agent.runtime helix`"}, ""},
		{"good, runtime helix", [][2]string{{"helix.model", "qwen3:8b"}, {"agent.runtime", "helix"}, {"helix.desktop_quota", "2"}},
			[]string{"agent.runtime is helix: activations run on Helix, at most 2 at once (helix.desktop_quota)"}, ""},
		{"a model Helix lacks", [][2]string{{"helix.model", "gpt-9"}}, nil, `helix.model "gpt-9" is not a model of Helix's provider helix`},
		{"a wrong key", [][2]string{{"helix.model", "qwen3:8b"}, {"helix.api_key", "hx-wrong"}}, nil, "helix.api_key is refused by Helix"},
		{"nothing set", [][2]string{{"helix.url", ""}, {"helix.provider", ""}}, nil, "the helix runtime needs helix.url, helix.provider, helix.model: " +
			"set with `helix-org config set <key> <value>`"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := newDB(t)
			base := [][2]string{{"transport.webhook.allow_private", "true"}, {"helix.url", fake.URL}, {"helix.api_key", fake.Key}, {"helix.provider", "helix"}}
			for _, kv := range append(base, tt.config...) {
				if kv[1] == "" {
					mustRun(t, "config", "delete", kv[0], "--db", db)
					continue
				}
				mustRun(t, "config", "set", kv[0], kv[1], "--db", db)
			}
			out, _, err := run(t, "", "bootstrap", "helix-runtime", "--db", db)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			wantAll(t, "bootstrap helix-runtime", out, tt.want...)
		})
	}
}

// serveHelixOrg serves a default org and the org north, on agent.runtime
// helix against the Helix at url with key and provider, opens north with
// its sign-in page (which must answer 200) and returns the server's log.
func serveHelixOrg(t *testing.T, url, key, provider string) *demoLogBuffer {
	t.Helper()
	db := filepath.Join(t.TempDir(), "helix-org.db")
	st, err := store.Open(t.Context(), db, store.Options{Transports: transports.Specs(), Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	mustRun(t, "orgs", "create", "north", "--db", db)
	for _, kv := range [][2]string{{"agent.runtime", "helix"}, {"helix.url", url}, {"helix.api_key", key}, {"helix.provider", provider},
		{"helix.model", "qwen3:8b"}, {"transport.webhook.allow_private", "true"}} {
		mustRun(t, "--org", "north", "config", "set", kv[0], kv[1], "--db", db)
	}
	logs := &demoLogBuffer{}
	base, _, _ := startServeWith(t, st, logs, serveConfig{dbFlags: dbFlags{DB: db}})
	resp, err := http.Get(base + "/orgs/north/ui/signin")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("north's sign-in page: %d, want 200", resp.StatusCode)
	}
	return logs
}

// TestOrgOpensDespiteHelixLackingItsProvider: an org opened while the
// server runs, on agent.runtime helix with a provider Helix lacks, is
// served (its people can still work), and the log says why its runs will
// fail and how to fix them.
func TestOrgOpensDespiteHelixLackingItsProvider(t *testing.T) {
	t.Parallel()
	fake := helixtest.Start(t)
	logs := serveHelixOrg(t, fake.URL, fake.Key, "anthropic")
	want := `level=WARN msg="org's runs will fail until its Helix settings are fixed" org=north ` +
		`err="agent.runtime is helix, and Helix cannot take its runs: helix.provider \"anthropic\" is not a provider Helix has (it has: helix): ` +
		"fix it with `helix-org config set helix.provider <provider>`\" " + `fix="helix-org --org north config set <key> <value>"`
	logs.waitFor(t, want, 30*time.Second)
}

// TestOrgOpensWithoutWaitingForHelix: the org's first request is answered
// while its Helix check still waits on a Helix that does not answer; the
// warning follows once Helix gives up.
func TestOrgOpensWithoutWaitingForHelix(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	stuck := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
		http.Error(w, "overloaded", http.StatusServiceUnavailable)
	}))
	t.Cleanup(stuck.Close)
	free := sync.OnceFunc(func() { close(release) })
	t.Cleanup(free) // before Close, which waits for the handler
	logs := serveHelixOrg(t, stuck.URL, "hx-key", "helix")
	const warning = `msg="org's runs will fail until its Helix settings are fixed" org=north`
	if got := logs.String(); strings.Contains(got, warning) {
		t.Fatalf("the sign-in page was answered after the Helix check, which cannot have finished while Helix hangs:\n%s", got)
	}
	free()
	logs.waitFor(t, warning, 30*time.Second)
}
