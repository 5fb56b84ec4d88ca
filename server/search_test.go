package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/gateway"
	"github.com/helixml/helix-org/gateway/gatewaytest"
	"github.com/helixml/helix-org/server"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
	"github.com/helixml/helix-org/tools"
)

// manySkills saves n skills, each a tool of its own, the last the one
// that reconciles invoices; it returns their tool names.
func manySkills(t *testing.T, st *store.Store, n int) []string {
	t.Helper()
	verbs := []string{"Convert", "Summarise", "Translate", "Validate", "Format", "Compress", "Sort", "Count"}
	things := []string{"temperatures", "CSV rows", "dates", "postcodes", "phone numbers", "colours", "units", "currencies"}
	var names []string
	for i := range n {
		desc := fmt.Sprintf("%s %s for a report.", verbs[i%len(verbs)], things[i/len(verbs)%len(things)])
		if i == n-1 {
			desc = "Reconcile an invoice against the ledger and list the differences."
		}
		sk := domain.Skill{Name: fmt.Sprintf("util_%02d", i), Description: desc, Version: 1, Status: domain.SkillReady, CreatedBy: store.OwnerWorker,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","description":"the input"}}}`)}
		if _, err := st.SaveSkill(t.Context(), store.OwnerWorker, sk); err != nil {
			t.Fatal(err)
		}
		names = append(names, sk.ToolName())
	}
	return names
}

// outsideCount is how many tools the outside server of TestToolSearch
// offers.
const outsideCount = 20

// TestToolSearch: a worker granted 120 tools — every built-in one, the 20
// tools of an outside MCP server, and skills to make up the rest — is
// shown find_tools and the compact core within the default context budget
// (8 KB as a model sees it); find_tools finds a tool, built-in, skill or
// outside, by a word of its description, and the tool found is called on
// the same endpoint, whether the server answers the call itself or the
// go-sdk does. With tool search off the worker is shown all 120.
func TestToolSearch(t *testing.T) {
	st := storetest.NewWith(t, store.Options{Transports: servertest.Transports})
	if _, err := st.Bootstrap(t.Context(), tools.Names()); err != nil {
		t.Fatal(err)
	}
	g := gateway.New(st, gateway.Options{AllowPrivate: func(context.Context) bool { return true }, Unsandboxed: true, Dir: t.TempDir()})
	t.Cleanup(g.Close)
	direct := server.New(st, server.Config{Outside: g})
	viaSDK := server.New(st, server.Config{Outside: g})
	viaSDK.ServeCallsViaSDK()
	hd, hs := httptest.NewServer(direct), httptest.NewServer(viaSDK)
	t.Cleanup(hd.Close)
	t.Cleanup(hs.Close)
	h := &servertest.Harness{Store: st, Server: hd, OwnerToken: servertest.Token(t, st, store.OwnerWorker)}
	owner := h.Owner(t)
	added := servertest.Call[struct {
		Tools int `json:"tools"`
	}](t, owner, "add_mcp_server", map[string]any{"name": "toolbox", "url": gatewaytest.StartToolbox(t, outsideCount)})
	if added.Tools != outsideCount {
		t.Fatalf("add_mcp_server: %d tools, want %d", added.Tools, outsideCount)
	}
	var outsideNames []string
	for i := range outsideCount - 1 {
		outsideNames = append(outsideNames, fmt.Sprintf("toolbox__tool_%02d", i))
	}
	outsideNames = append(outsideNames, "toolbox__tide_forecast")
	// Skills fill the grants up to 120, however many tools are built in.
	skills := manySkills(t, st, 120-len(tools.Names())-outsideCount)
	grants := slices.Concat(tools.Names(), outsideNames, skills)
	servertest.Call[any](t, owner, "create_role", map[string]any{"id": "r-clerk", "title": "Clerk", "content": "Keep the books."})
	servertest.Call[any](t, owner, "create_position", map[string]any{"id": "p-clerk", "role": "r-clerk", "title": "Clerk"})
	servertest.Call[any](t, owner, "hire_worker", map[string]any{"id": "w-clerk", "position": "p-clerk", "kind": "ai", "name": "Clerk", "grants": grants})
	token := servertest.Token(t, st, "w-clerk")

	for name, url := range map[string]string{"direct": hd.URL, "go-sdk": hs.URL} {
		t.Run(name, func(t *testing.T) {
			cs, err := servertest.Dial(t, domain.MCPURL(url, "w-clerk"), token)
			if err != nil {
				t.Fatal(err)
			}
			listed, err := cs.ListTools(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			size := 0
			var names []string
			for _, tool := range listed.Tools {
				size += tools.ShownBytes(tool)
				names = append(names, tool.Name)
			}
			t.Logf("of 120 tools, %d shown in %d B: %v", len(names), size, names)
			if limit := 8192; size > limit || !slices.Contains(names, "find_tools") || len(names) >= len(grants) {
				t.Errorf("shown %d tools in %d B, want find_tools and the core within %d B", len(names), size, limit)
			}
			for _, c := range []struct{ query, want string }{
				{"reconcile an invoice", skills[len(skills)-1]},
				{"a seat in the org chart for a role", "create_position"},
				{"list roles", "list_roles"},
				{"tide at a harbour", "toolbox__tide_forecast"},
			} {
				found := servertest.Call[struct{ Tools []struct{ Name string } }](t, cs, "find_tools", map[string]any{"query": c.query, "limit": 3})
				if len(found.Tools) == 0 || found.Tools[0].Name != c.want {
					t.Errorf("find_tools %q = %+v, want %s first", c.query, found.Tools, c.want)
				}
			}
			roles := servertest.Call[struct{ Roles []domain.Role }](t, cs, "list_roles", nil)
			if len(roles.Roles) != 2 {
				t.Errorf("list_roles, found and called: %+v, want the owner's and the clerk's roles", roles.Roles)
			}
			pos := servertest.Call[domain.Position](t, cs, "create_position", map[string]any{"role": "r-clerk", "title": "Junior clerk " + name})
			if pos.ReportsTo != "p-clerk" {
				t.Errorf("create_position, found and called: %+v, want a position below p-clerk", pos)
			}
			tide := servertest.Call[struct{ Text string }](t, cs, "toolbox__tide_forecast", map[string]any{"place": "Dover"})
			if tide.Text != gatewaytest.Tide {
				t.Errorf("toolbox__tide_forecast, found and called: %+v, want %q", tide, gatewaytest.Tide)
			}
		})
	}

	all, err := servertest.DialHeader(t, domain.MCPURL(hd.URL, "w-clerk"), token, http.Header{domain.ToolSearchHeader: {"off"}})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(servertest.ToolNames(t, all)); n != 120 {
		t.Errorf("with tool search off, %d tools listed, want all 120", n)
	}
}
