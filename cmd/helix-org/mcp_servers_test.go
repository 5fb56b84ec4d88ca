package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/helixml/helix-org/gateway/gatewaytest"
	"github.com/helixml/helix-org/safedial"
	"github.com/helixml/helix-org/store"
)

// TestMCPServersCommand: the operator attaches a server with a credential
// read from stdin, lists it healthy with its tools (and no credential),
// and removes it with the owner's grants of its tools.
func TestMCPServersCommand(t *testing.T) {
	tr := gatewaytest.StartTracker(t, gatewaytest.Is("cli-token-9"))
	db := bootstrapped(t)
	mustRun(t, "config", "set", "--db", db, safedial.AllowPrivateSetting.Key, "true")
	envs := t.TempDir()

	out, errOut, err := run(t, `{"type":"bearer","token":"cli-token-9"}`, "mcp-servers", "add", "tracker", "--db", db, "--envs-dir", envs,
		"--url", tr.URL(), "--auth-file", "-")
	if err != nil || !strings.Contains(out, "added tracker: 3 tools") || !strings.Contains(out, "tracker__get_ticket") {
		t.Fatalf("add: %v\n%s%s", err, out, errOut)
	}
	list := mustRun(t, "mcp-servers", "list", "--db", db)
	if !strings.Contains(list, "tracker") || !strings.Contains(list, "true") || strings.Contains(list, "cli-token-9") {
		t.Errorf("list =\n%s\nwant tracker healthy, without its token", list)
	}
	held := func() []string {
		st := openStore(t, db)
		defer st.Close()
		tools, err := st.LiveTools(t.Context(), store.OwnerWorker)
		if err != nil {
			t.Fatal(err)
		}
		return tools
	}
	if !slices.Contains(held(), "tracker__close_ticket") {
		t.Error("owner does not hold tracker__close_ticket after add")
	}
	mustRun(t, "mcp-servers", "remove", "tracker", "--db", db)
	if slices.Contains(held(), "tracker__close_ticket") {
		t.Error("owner still holds tracker__close_ticket after remove")
	}
	raw, err := os.ReadFile(filepath.Clean(db))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), "cli-token-9") {
		t.Error("the database file holds the token in plain text")
	}
}

func TestMCPServersAddRefusesBadInput(t *testing.T) {
	db := bootstrapped(t)
	for _, tc := range []struct {
		name, stdin string
		args        []string
		want        string
	}{
		{"neither url nor command", "", []string{"x"}, "give --url (Streamable HTTP) or --command (stdio)"},
		{"both", "", []string{"x", "--url", "http://127.0.0.1:1/", "--command", "/bin/true"}, "one of them"},
		{"a bad env", "", []string{"x", "--command", "/bin/true", "--env", "NOEQUALS"}, "want KEY=VALUE"},
		{"a bad name", "", []string{"a__b", "--url", "http://127.0.0.1:1/"}, "name:"},
		{"a credential that is not JSON", "token", []string{"x", "--url", "http://127.0.0.1:1/", "--auth-file", "-"}, "not a credential object"},
		{"a bearer without a token", `{"type":"bearer"}`, []string{"x", "--url", "http://127.0.0.1:1/", "--auth-file", "-"}, "auth.token: is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := run(t, tc.stdin, append([]string{"mcp-servers", "add", "--db", db}, tc.args...)...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v; want %q", err, tc.want)
			}
		})
	}
}
