package server_test

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
	"github.com/helixml/helix-org/tools"
)

// TestToolsListAnswersAsTheSDK sends the same tools/list requests to two
// servers over one store: one that answers plain ones from its cache, and
// one that hands every request to the go-sdk. Each answer — status,
// headers and body — must be the same byte for byte, for a worker with
// every tool and a skill, and one with a few; and the requests the server
// should answer itself must be the ones it did.
func TestToolsListAnswersAsTheSDK(t *testing.T) {
	st := storetest.NewWith(t, store.Options{Transports: servertest.Transports})
	if _, err := st.Bootstrap(t.Context(), tools.Names()); err != nil {
		t.Fatal(err)
	}
	direct := server.New(st, server.Config{})
	viaSDK := server.New(st, server.Config{})
	viaSDK.ServeCallsViaSDK()
	hd, hs := httptest.NewServer(direct), httptest.NewServer(viaSDK)
	t.Cleanup(hd.Close)
	t.Cleanup(hs.Close)
	h := &servertest.Harness{Store: st, Server: hd, OwnerToken: servertest.Token(t, st, store.OwnerWorker)}
	owner := h.Owner(t)
	// A skill whose description a careless encoder would escape (<, &).
	shout := domain.Skill{Name: "shout", Description: "Upper-case <text> & more.", Version: 1, Status: domain.SkillReady, CreatedBy: store.OwnerWorker,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","description":"what to shout"}}}`)}
	if _, err := st.SaveSkill(t.Context(), store.OwnerWorker, shout); err != nil {
		t.Fatal(err)
	}
	servertest.Call[any](t, owner, "create_role", map[string]any{"id": "r-staff", "title": "Staff", "content": "Work."})
	servertest.Call[any](t, owner, "create_position", map[string]any{"id": "p-staff", "role": "r-staff", "title": "Staff"})
	servertest.Call[any](t, owner, "hire_worker", map[string]any{"id": "w-maya", "position": "p-staff", "kind": "human", "name": "Maya",
		"grants": []string{"read_events", "publish", "create_stream"}})
	tokens := map[string]string{store.OwnerWorker: h.OwnerToken, "w-maya": servertest.Token(t, st, "w-maya")}

	cases := []struct {
		name, id string
		params   string // a JSON object, "null" or nothing
		header   map[string]string
		direct   bool
		// legacyOnly: only before 2026-07-28 is it a plain list.
		legacyOnly bool
	}{
		{"no params", "1", ``, nil, true, false},
		{"empty params", "2", `{}`, nil, true, false},
		{"null params", "3", `null`, nil, true, false},
		{"a string id", `"l\u003c1&"`, ``, nil, true, false},
		// What the go-sdk answers alone.
		{"a cursor", "10", `{"cursor":"x"}`, nil, false, false},
		{"a progress token", "11", `{"_meta":{"progressToken":"p"}}`, nil, false, false},
		{"a fractional id", "1.5", ``, nil, false, false},
		{"an unknown version header", "12", ``, map[string]string{"MCP-Protocol-Version": "2099-01-01"}, false, false},
		{"an accept wildcard", "13", ``, map[string]string{"Accept": "*/*"}, false, false},
		{"an Mcp-Name", "14", ``, map[string]string{"Mcp-Name": "publish"}, true, true},
	}
	for _, worker := range []string{store.OwnerWorker, "w-maya"} {
		for _, c := range cases {
			for _, v := range []string{"2025-06-18", v20251125, v20260728} {
				t.Run(worker+"/"+c.name+"/"+v, func(t *testing.T) {
					header := map[string]string{"MCP-Protocol-Version": v}
					for k, val := range c.header {
						header[k] = val
					}
					params := c.params
					if v == v20260728 && !strings.Contains(params, "_meta") {
						switch params {
						case "", "null", "{}":
							params = "{" + meta26(v) + "}"
						default:
							params = "{" + meta26(v) + "," + params[1:]
						}
					}
					if params != "" {
						params = `,"params":` + params
					}
					body := `{"jsonrpc":"2.0","id":` + c.id + `,"method":"tools/list"` + params + `}`
					before := direct.DirectLists()
					got := post(t, domain.MCPURL(hd.URL, worker), tokens[worker], body, header)
					wantDirect := c.direct && !(c.legacyOnly && v == v20260728)
					if answered := direct.DirectLists() - before; answered != map[bool]int64{true: 1}[wantDirect] {
						t.Errorf("answered directly %d times, want %v", answered, wantDirect)
					}
					want := post(t, domain.MCPURL(hs.URL, worker), tokens[worker], body, header)
					if got.status != want.status {
						t.Errorf("status %d, the go-sdk's %d", got.status, want.status)
					}
					for _, k := range []string{"Content-Type", "Cache-Control", "Mcp-Session-Id"} {
						if got.respHeader.Get(k) != want.respHeader.Get(k) {
							t.Errorf("%s %q, the go-sdk's %q", k, got.respHeader.Get(k), want.respHeader.Get(k))
						}
					}
					if string(got.respBody) != string(want.respBody) {
						t.Errorf("answer\n%s\nthe go-sdk's\n%s", got.respBody, want.respBody)
					}
				})
			}
		}
	}
}

// TestToolsListFollowsGrants: the kept list is the grant set's, so a
// grant or revocation made through another server over the same store —
// another process — shows in this one's next tools/list.
func TestToolsListFollowsGrants(t *testing.T) {
	h := servertest.Start(t, server.Config{})
	owner := h.Owner(t)
	seedOrg(t, h, owner)
	other := httptest.NewServer(server.New(h.Store, server.Config{}))
	t.Cleanup(other.Close)
	otherOwner, err := servertest.Dial(t, domain.MCPURL(other.URL, store.OwnerWorker), h.OwnerToken)
	if err != nil {
		t.Fatal(err)
	}
	maya := h.Connect(t, "w-maya", servertest.Token(t, h.Store, "w-maya"))
	steps := []struct {
		tool, change string
		want         []string
	}{
		{"list_roles", "grant_tool", []string{"list_roles"}},
		{"publish", "grant_tool", []string{"list_roles", "publish"}},
		{"list_roles", "revoke_tool", []string{"publish"}},
	}
	for _, s := range steps {
		servertest.Call[any](t, otherOwner, s.change, map[string]any{"worker": "w-maya", "tool": s.tool})
		if diff := cmp.Diff(s.want, sortedCopy(servertest.ToolNames(t, maya))); diff != "" {
			t.Errorf("after %s %s, tools/list (-want +got):\n%s", s.change, s.tool, diff)
		}
	}
}
