package server_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/gateway"
	"github.com/helixml/helix-org/gateway/gatewaytest"
	"github.com/helixml/helix-org/server"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

const trackerToken = "tracker-bearer-7f3a"

// outsideOrg is a server with a gateway allowed onto loopback, the owner
// connected, and two AI workers: w-granted and w-other.
func outsideOrg(t *testing.T) (*servertest.Harness, *mcp.ClientSession) {
	t.Helper()
	st := storetest.NewWith(t, store.Options{Transports: servertest.Transports})
	g := gateway.New(st, gateway.Options{AllowPrivate: func(context.Context) bool { return true }, Unsandboxed: true, Dir: t.TempDir()})
	t.Cleanup(g.Close)
	h := servertest.StartWith(t, st, server.Config{Outside: g})
	ctx := t.Context()
	if _, err := st.CreatePosition(ctx, store.OwnerWorker, domain.Position{ID: "p-agent", RoleID: store.OwnerRole, Title: "Agent"}); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"w-granted", "w-other"} {
		if _, err := st.HireWorker(ctx, store.OwnerWorker, domain.Worker{ID: w, Kind: domain.WorkerAI, PositionID: "p-agent", Name: w}, nil); err != nil {
			t.Fatal(err)
		}
	}
	return h, h.Owner(t)
}

// TestOutsideServerThroughHelix: the owner attaches a real MCP server
// over Streamable HTTP with a bearer credential; a worker granted one of
// its tools sees and calls it through its own endpoint, the credential
// going only from helix-org to the server; a worker not granted it
// neither sees it nor may call it.
func TestOutsideServerThroughHelix(t *testing.T) {
	tr := gatewaytest.StartTracker(t, gatewaytest.Is(trackerToken))
	h, owner := outsideOrg(t)
	ownerBefore := servertest.ToolNames(t, owner) // cached, to be invalidated
	added := servertest.Call[struct {
		Healthy bool `json:"healthy"`
		Tools   int  `json:"tools"`
	}](t, owner, "add_mcp_server", map[string]any{"name": "tracker", "url": tr.URL(), "auth": map[string]any{"type": "bearer", "token": trackerToken}})
	if !added.Healthy || added.Tools != 3 {
		t.Fatalf("add_mcp_server = %+v; want healthy with 3 tools", added)
	}
	// The owner holds them all: past the search threshold it finds them.
	found := servertest.Call[struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}](t, owner, "find_tools", map[string]any{"query": "ticket"})
	if !slices.ContainsFunc(found.Tools, func(x struct {
		Name string `json:"name"`
	}) bool {
		return x.Name == "tracker__get_ticket"
	}) {
		t.Errorf("owner's find_tools(ticket) = %+v; want tracker__get_ticket", found.Tools)
	}
	if slices.Equal(ownerBefore, servertest.ToolNames(t, owner)) && !slices.Contains(ownerBefore, "find_tools") {
		t.Errorf("owner's tools/list did not change after the server was added")
	}

	grant(t, h, "w-granted", "tracker__get_ticket")
	granted := h.Connect(t, "w-granted", servertest.Token(t, h.Store, "w-granted"))
	if names := servertest.ToolNames(t, granted); !slices.Contains(names, "tracker__get_ticket") || slices.Contains(names, "tracker__close_ticket") {
		t.Errorf("w-granted's tools/list = %v; want tracker__get_ticket and no other tracker tool", names)
	}
	res, err := granted.CallTool(t.Context(), &mcp.CallToolParams{Name: "tracker__get_ticket", Arguments: map[string]any{"id": 7}})
	if err != nil || res.IsError || !strings.Contains(servertest.Text(res), gatewaytest.Ticket) {
		t.Fatalf("w-granted calls tracker__get_ticket: %v, %+v; want the ticket", err, res)
	}
	if msg := servertest.CallErr(t, granted, "tracker__close_ticket", map[string]any{"id": 7}); !strings.Contains(msg, `does not hold grant "tracker__close_ticket"`) {
		t.Errorf("ungranted call answered %q; want the missing grant", msg)
	}

	other := h.Connect(t, "w-other", servertest.Token(t, h.Store, "w-other"))
	if names := servertest.ToolNames(t, other); slices.ContainsFunc(names, domain.IsOutsideTool) {
		t.Errorf("w-other sees outside tools: %v", names)
	}
	if msg := servertest.CallErr(t, other, "tracker__get_ticket", map[string]any{"id": 7}); !strings.Contains(msg, `missing grant: worker w-other does not hold grant "tracker__get_ticket"`) {
		t.Errorf("w-other's call answered %q; want the missing grant", msg)
	}
	for _, a := range tr.Auths() {
		if a != "Bearer "+trackerToken {
			t.Errorf("the tracker saw Authorization %q; want only helix-org's credential", a)
		}
	}
	// Its cached tools/list follows the server: removed, its tools go.
	servertest.Call[any](t, owner, "remove_mcp_server", map[string]any{"name": "tracker"})
	if names := servertest.ToolNames(t, granted); slices.ContainsFunc(names, domain.IsOutsideTool) {
		t.Errorf("after remove_mcp_server w-granted still sees %v", names)
	}
}

// TestOutsideResultsAreUntrusted: what an untrusted server answers raises
// the run's label, and a tool its server does not call read-only then
// waits for approval; outside a run it goes straight through.
func TestOutsideResultsAreUntrusted(t *testing.T) {
	tr := gatewaytest.StartTracker(t, gatewaytest.Is(trackerToken))
	h, owner := outsideOrg(t)
	servertest.Call[any](t, owner, "add_mcp_server", map[string]any{"name": "tracker", "url": tr.URL(), "auth": map[string]any{"type": "bearer", "token": trackerToken}})
	grant(t, h, "w-granted", "tracker__get_ticket", "tracker__close_ticket")
	run, runToken := startRun(t, h.Store, "w-granted")
	cs := h.Connect(t, "w-granted", runToken)

	servertest.Call[any](t, cs, "tracker__get_ticket", map[string]any{"id": 7})
	label, err := h.Store.ActivationLabel(t.Context(), run)
	if err != nil {
		t.Fatal(err)
	}
	if !label.Untrusted || label.Origin != "mcp server tracker tool get_ticket" {
		t.Errorf("run's label = %s; want untrusted from mcp server tracker tool get_ticket", label)
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "tracker__close_ticket", Arguments: map[string]any{"id": 7}})
	if err != nil || res.IsError || !strings.Contains(servertest.Text(res), "pending approval") {
		t.Fatalf("close_ticket in the untrusted run: %v, %s; want it held for approval", err, servertest.Text(res))
	}
	approvals, err := h.Store.ListApprovals(t.Context(), store.OwnerWorker, store.ApprovalFilter{})
	if err != nil || len(approvals) != 1 || approvals[0].Tool != "tracker__close_ticket" || approvals[0].Kind != domain.ApprovalUntrusted {
		t.Errorf("approvals = %+v, %v; want one, untrusted, for tracker__close_ticket", approvals, err)
	}

	plain := h.Connect(t, "w-granted", servertest.Token(t, h.Store, "w-granted"))
	if out := servertest.Text(callOK(t, plain, "tracker__close_ticket", map[string]any{"id": 7})); !strings.Contains(out, "closed") {
		t.Errorf("close_ticket outside a run = %q; want it run", out)
	}
}

// TestOutsideServerThatHangs: a call the server never answers is a tool
// error within the server's timeout, and the worker's next call works.
func TestOutsideServerThatHangs(t *testing.T) {
	tr := gatewaytest.StartTracker(t, gatewaytest.Is(trackerToken))
	h, owner := outsideOrg(t)
	servertest.Call[any](t, owner, "add_mcp_server", map[string]any{"name": "tracker", "url": tr.URL(), "timeout": "1s",
		"auth": map[string]any{"type": "bearer", "token": trackerToken}})
	grant(t, h, "w-granted", "tracker__wait", "tracker__get_ticket")
	cs := h.Connect(t, "w-granted", servertest.Token(t, h.Store, "w-granted"))
	start := time.Now()
	msg := servertest.CallErr(t, cs, "tracker__wait", nil)
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the hung call took %s; want about its 1s timeout", took)
	}
	if !strings.Contains(msg, "mcp server tracker did not answer within 1s") {
		t.Errorf("hung call answered %q; want the timeout named", msg)
	}
	if out := servertest.Text(callOK(t, cs, "tracker__get_ticket", map[string]any{"id": 7})); !strings.Contains(out, gatewaytest.Ticket) {
		t.Errorf("the call after = %q; want the ticket", out)
	}
}

func callOK(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil || res.IsError {
		t.Fatalf("%s: %v, %s", name, err, servertest.Text(res))
	}
	return res
}

func grant(t *testing.T, h *servertest.Harness, worker string, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := h.Store.GrantTool(t.Context(), store.OwnerWorker, domain.Grant{WorkerID: worker, Tool: tool}); err != nil {
			t.Fatal(err)
		}
	}
}

// startRun starts a run of worker, woken by the owner on s-wake, and
// mints the token it calls with.
func startRun(t *testing.T, st *store.Store, worker string) (run, token string) {
	t.Helper()
	ctx := t.Context()
	if _, err := st.CreateStream(ctx, store.OwnerWorker, domain.Stream{ID: "s-wake", Name: "wake", Transport: domain.Transport{Kind: domain.TransportLocal}}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Subscribe(ctx, store.OwnerWorker, "s-wake", worker); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Append(ctx, domain.Event{StreamID: "s-wake", Source: store.OwnerWorker, Message: domain.Message{From: store.OwnerWorker, Body: "look at ticket 7"}}, store.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	act, _, _, err := st.Claim(ctx, worker, "a-"+domain.RandomSlug(8), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := st.CreateToken(ctx, store.TokenSpec{WorkerID: worker, Kind: store.TokenActivation, ActivationID: act.ID, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return act.ID, tok
}
