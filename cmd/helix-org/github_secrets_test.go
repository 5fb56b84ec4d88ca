package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/gateway/gatewaytest"
	"github.com/helixml/helix-org/safedial"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
)

// dumpFile is where githubDumpAgent writes what it holds, in its own
// directory.
const dumpFile = "dump.txt"

// githubDumpAgent is an agent that shows everything it holds: its
// environment, every file of its directory (mcp.json among them), and
// what github__issue_read answers through its helix endpoint, written to
// dump.txt.
func githubDumpAgent() int {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	io.ReadAll(os.Stdin)
	var b strings.Builder
	b.WriteString("== environment\n" + strings.Join(os.Environ(), "\n") + "\n")
	filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		data, err := os.ReadFile(path)
		fmt.Fprintf(&b, "== file %s (%v)\n%s\n", path, err, data)
		return nil
	})
	cs, _, _, err := connectFromEnv(ctx)
	if err == nil {
		var res *mcp.CallToolResult
		res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "github__issue_read",
			Arguments: map[string]any{"method": "get", "owner": "Codertocat", "repo": "Hello-World", "issue_number": 1}})
		if err == nil {
			fmt.Fprintf(&b, "== github__issue_read (error %t)\n%s\n", res.IsError, servertest.Text(res))
		}
		cs.Close()
	}
	if err != nil {
		fmt.Fprintf(&b, "== github__issue_read failed: %v\n", err)
	}
	if err := os.WriteFile(dumpFile, []byte(b.String()), 0o600); err != nil {
		fmt.Println(err)
		return 1
	}
	return 0
}

// TestGitHubCredentialNeverReachesTheAgent: github-mcp-server is attached
// with a GitHub App credential, and a real run of a worker granted
// github__issue_read (the command runtime, in the sandbox) reads an issue
// through its helix endpoint. What the run holds — its environment, every
// file of its directory, its mcp.json — and every file under envs hold
// neither the App's private key nor an installation token nor any other
// GitHub credential; the fake GitHub saw the installation token.
func TestGitHubCredentialNeverReachesTheAgent(t *testing.T) {
	t.Parallel()
	bin := gatewaytest.GitHubMCPServer(t)
	gh := gatewaytest.StartGitHubApp(t)
	pemKey := gh.PrivateKey

	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "helix-org.db"), store.Options{Transports: transports.Specs()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	setAll(t, st, map[*domain.SettingSpec]string{&agent.RuntimeSetting: agent.RuntimeCommand, &agent.CommandSetting: agentCommand(t, "github-dump"),
		&safedial.AllowPrivateSetting: "true"}) // the fake GitHub's token endpoint is on loopback
	_, envs, owner := startServe(t, st, io.Discard)
	servertest.Call[any](t, owner, "add_mcp_server", map[string]any{
		"name": "github", "command": bin, "args": []string{"stdio", "--gh-host", gatewaytest.GHESHost, "--toolsets", "issues", "--read-only"},
		"env":  []map[string]string{{"name": "HTTP_PROXY", "value": gh.Proxy()}},
		"auth": map[string]any{"type": "github_app", "app_id": 1234, "installation_id": 42, "private_key": pemKey, "api_url": gh.URL},
	})
	servertest.Call[any](t, owner, "create_role", map[string]any{"id": "r-dev", "title": "Dev", "content": "Read issue 1."})
	servertest.Call[any](t, owner, "create_position", map[string]any{"id": "p-dev", "role": "r-dev", "title": "Dev"})
	servertest.Call[any](t, owner, "hire_worker", map[string]any{"id": "w-dev", "position": "p-dev", "kind": "ai", "name": "Dev", "grants": []string{"github__issue_read"}})
	waitIdle(t, st)

	dumps, _ := filepath.Glob(filepath.Join(envs, "*", dumpFile))
	if len(dumps) != 1 {
		t.Fatalf("dumps %v; want the run's %s", dumps, dumpFile)
	}
	dump, err := os.ReadFile(dumps[0])
	if err != nil {
		t.Fatal(err)
	}
	// It is a real run's: it holds its own token, its mcp.json, and the
	// issue it read through helix-org.
	for _, want := range []string{domain.TokenEnv + "=" + store.ActivationTokenPrefix, "== file mcp.json", "== github__issue_read (error false)", "Spelling error in the README file"} {
		if !strings.Contains(string(dump), want) {
			t.Errorf("the run's dump holds no %q:\n%s", want, dump)
		}
	}
	minted := gh.Minted()
	if len(minted) == 0 {
		t.Fatal("no installation token was minted")
	}
	for _, a := range gh.Seen() {
		if a != "Bearer "+minted[len(minted)-1] && !strings.HasPrefix(a, "Bearer ghs_installation") {
			t.Errorf("the fake GitHub saw Authorization %q; want an installation token", a)
		}
	}
	secrets := append([]string{"PRIVATE KEY", strings.Split(pemKey, "\n")[1], "ghs_", "ghp_", "github_pat_", "GITHUB_PERSONAL_ACCESS_TOKEN", "GITHUB_TOKEN", "GH_TOKEN"}, minted...)
	err = filepath.WalkDir(envs, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, s := range secrets {
			if strings.Contains(string(data), s) {
				t.Errorf("%s holds %q", path, s)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
