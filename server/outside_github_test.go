package server_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/gateway"
	"github.com/helixml/helix-org/gateway/gatewaytest"
	"github.com/helixml/helix-org/server"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

// TestGitHubMCPServerWithAnAppCredential: github-mcp-server, built from
// the module proxy, runs as a stdio server in the sandbox, pointed at a
// fake GitHub Enterprise; helix-org holds a GitHub App's key, mints an
// installation token and hands it to the process. A worker granted
// github__issue_read reads a real issue payload through its own helix
// endpoint; the fake saw only the installation token, and nothing the
// worker is shown holds the App's key or the token.
func TestGitHubMCPServerWithAnAppCredential(t *testing.T) {
	bin := gatewaytest.GitHubMCPServer(t)
	gh := gatewaytest.StartGitHubApp(t)
	pemKey := gh.PrivateKey

	st := storetest.NewWith(t, store.Options{Transports: servertest.Transports})
	check := agent.CheckSandbox(t.Context(), "")
	if check.Err != nil {
		t.Fatalf("bubblewrap cannot run here (%v): install bubblewrap", check.Err)
	}
	g := gateway.New(st, gateway.Options{AllowPrivate: func(context.Context) bool { return true }, Sandbox: func() *agent.Bwrap { return &agent.Bwrap{Path: check.Bwrap} }, Dir: t.TempDir()})
	t.Cleanup(g.Close)
	h := servertest.StartWith(t, st, server.Config{Outside: g})
	owner := h.Owner(t)
	added := servertest.Call[map[string]any](t, owner, "add_mcp_server", map[string]any{
		"name": "github", "command": bin, "args": []string{"stdio", "--gh-host", gatewaytest.GHESHost, "--toolsets", "issues", "--read-only"},
		"env":  []map[string]string{{"name": "HTTP_PROXY", "value": gh.Proxy()}},
		"auth": map[string]any{"type": "github_app", "app_id": 1234, "installation_id": 42, "private_key": pemKey, "api_url": gh.URL},
	})
	if added["healthy"] != true {
		t.Fatalf("add_mcp_server = %v; want healthy", added)
	}
	if _, err := st.CreatePosition(t.Context(), store.OwnerWorker, domain.Position{ID: "p-agent", RoleID: store.OwnerRole, Title: "Agent"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.HireWorker(t.Context(), store.OwnerWorker, domain.Worker{ID: "w-dev", Kind: domain.WorkerAI, PositionID: "p-agent", Name: "Dev"}, nil); err != nil {
		t.Fatal(err)
	}
	grant(t, h, "w-dev", "github__issue_read")
	dev := h.Connect(t, "w-dev", servertest.Token(t, st, "w-dev"))
	list, err := dev.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := dev.CallTool(t.Context(), &mcp.CallToolParams{Name: "github__issue_read",
		Arguments: map[string]any{"method": "get", "owner": "Codertocat", "repo": "Hello-World", "issue_number": 1}})
	if err != nil || res.IsError || !strings.Contains(servertest.Text(res), "Spelling error in the README file") {
		t.Fatalf("github__issue_read: %v, %s; want the issue", err, servertest.Text(res))
	}

	minted := gh.Minted()
	if len(minted) == 0 || len(gh.Seen()) == 0 {
		t.Fatalf("minted %v, seen %v; want an installation token used", minted, gh.Seen())
	}
	for _, a := range gh.Seen() {
		if a != "Bearer "+minted[0] {
			t.Errorf("the fake GitHub saw Authorization %q; want the installation token %s", a, minted[0])
		}
	}
	shown, _ := json.Marshal([]any{added, list, res})
	secrets := append([]string{"PRIVATE KEY", strings.Split(pemKey, "\n")[1]}, minted...)
	for _, s := range secrets {
		if strings.Contains(string(shown), s) {
			t.Errorf("what the owner and the worker were shown holds %q", s)
		}
	}
	evs, err := st.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{domain.StreamOrg}, Limit: store.MaxReadLimit})
	if err != nil {
		t.Fatal(err)
	}
	trail, _ := json.Marshal(evs)
	if slices.ContainsFunc(secrets, func(s string) bool { return strings.Contains(string(trail), s) }) {
		t.Error("the org's audit trail holds the credential")
	}
	// Both calls are in the audit of calls, the credential redacted.
	if err := st.FlushCalls(t.Context()); err != nil {
		t.Fatal(err)
	}
	calls, err := st.ListCalls(t.Context(), store.CallFilter{})
	if err != nil {
		t.Fatal(err)
	}
	audited, _ := json.Marshal(calls)
	for _, c := range []struct{ worker, tool string }{{store.OwnerWorker, "add_mcp_server"}, {"w-dev", "github__issue_read"}} {
		if !slices.ContainsFunc(calls, func(x domain.ToolCall) bool {
			return x.Worker == c.worker && x.Tool == c.tool && x.Status == domain.CallOK
		}) {
			t.Errorf("the audit has no successful %s call by %s: %s", c.tool, c.worker, audited)
		}
	}
	if slices.ContainsFunc(secrets, func(s string) bool { return strings.Contains(string(audited), s) }) {
		t.Error("the audit of calls holds the credential")
	}
}
