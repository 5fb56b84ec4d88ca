package main

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/tools"
)

// TestBootstrapRestoresTheOwner: the owner gave up tools over MCP and was
// then dismissed (as a database from before the chart rules could hold:
// a worker holding dismiss_worker did it); its token is refused. Running
// `helix-org bootstrap` again says what it repaired, and the owner's old
// token works again with every tool.
func TestBootstrapRestoresTheOwner(t *testing.T) {
	db := tempDB(t)
	tok := printedToken(t, mustRun(t, "bootstrap", "--init", "--db", db))
	st := openStore(t, db)
	base, _, _ := startServe(t, st, io.Discard)
	url := base + "/workers/w-owner/mcp"

	// Tool search off: the owner's every tool is listed.
	all := http.Header{domain.ToolSearchHeader: {"off"}}
	owner, err := servertest.DialHeader(t, url, tok, all)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"dismiss_worker", "grant_tool"} {
		servertest.Call[any](t, owner, "revoke_tool", map[string]any{"worker": "w-owner", "tool": tool})
	}
	if got := servertest.ToolNames(t, owner); slices.Contains(got, "grant_tool") {
		t.Fatalf("owner still sees grant_tool after revoking it: %v", got)
	}
	if _, err := st.DismissWorker(t.Context(), "", store.OwnerWorker); err != nil {
		t.Fatal(err)
	}
	if _, err := servertest.Dial(t, url, tok); err == nil || !strings.Contains(err.Error(), "403") && !strings.Contains(err.Error(), "Forbidden") {
		t.Fatalf("dismissed owner's token connected: %v", err)
	}

	out := mustRun(t, "bootstrap", "--db", db)
	for _, want := range []string{
		"Restored w-owner (recorded on s-org):",
		"  - w-owner was dismissed at ",
		"  - granted 2 tool(s) it did not hold: dismiss_worker, grant_tool",
		"Token:     none minted; w-owner's 2 tokens keep working (helix-org token list shows them)", // bootstrap's and the test server's
	} {
		if !strings.Contains(out, want) {
			t.Errorf("bootstrap output lacks %q:\n%s", want, out)
		}
	}

	owner, err = servertest.DialHeader(t, url, tok, all)
	if err != nil {
		t.Fatalf("the owner's old token after bootstrap: %v", err)
	}
	got := servertest.ToolNames(t, owner)
	slices.Sort(got)
	want := tools.Names()
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("owner's tools after bootstrap = %v, want every tool %v", got, want)
	}
	servertest.Call[any](t, owner, "subscribe", map[string]any{"stream": domain.StreamOrg})
	org := servertest.Call[struct{ Events []domain.Event }](t, owner, "read_events", map[string]any{"streams": []string{domain.StreamOrg}, "limit": 500})
	var restores int
	for _, ev := range org.Events {
		var c store.Change
		json.Unmarshal(ev.Message.Extra, &c)
		if c.Action == "restore_owner" && c.Target == store.OwnerWorker {
			restores++
		}
	}
	if restores != 1 {
		t.Errorf("s-org holds %d restore_owner changes, want 1", restores)
	}

	if again := mustRun(t, "bootstrap", "--db", db); strings.Contains(again, "Restored") {
		t.Errorf("bootstrap of a healthy owner reports a repair:\n%s", again)
	}
}
