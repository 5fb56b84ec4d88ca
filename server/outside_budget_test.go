package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/gateway/gatewaytest"
	"github.com/helixml/helix-org/server/servertest"
)

// TestOutsideCallsBudget: a run's calls of an outside tool are priced by
// mcp.prices and count against the budgets over its worker; once a hard
// limit (calls, or money) is reached the next call is a tool error naming
// the budget, and never reaches the server; the org's spend shows the
// calls and their cost.
func TestOutsideCallsBudget(t *testing.T) {
	for _, c := range []struct {
		name   string
		budget map[string]any
		prices string
		want   string
		usd    float64
	}{
		{"calls limit", map[string]any{"calls": 2}, `{"tracker": 0.01}`,
			"budget exceeded: worker w-granted's daily budget of 2 outside tool calls is used up", 0.02},
		{"money limit, priced per tool", map[string]any{"usd": 0.5}, `{"tracker__get_ticket": 0.25, "tracker": 0.01}`,
			"budget exceeded: worker w-granted's daily budget of $0.50 is used up", 0.5},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr := gatewaytest.StartTracker(t, gatewaytest.Is(trackerToken))
			h, owner := outsideOrg(t)
			ctx := t.Context()
			servertest.Call[any](t, owner, "add_mcp_server", map[string]any{"name": "tracker", "url": tr.URL(), "auth": map[string]any{"type": "bearer", "token": trackerToken}})
			grant(t, h, "w-granted", "tracker__get_ticket")
			if err := h.Store.SetSetting(ctx, domain.MCPPricesSetting, c.prices); err != nil {
				t.Fatal(err)
			}
			args := map[string]any{"scope": "worker", "target": "w-granted", "window": "day"}
			for k, v := range c.budget {
				args[k] = v
			}
			servertest.Call[any](t, owner, "set_budget", args)
			_, tok := startRun(t, h.Store, "w-granted")
			run := h.Connect(t, "w-granted", tok)
			for i := range 2 {
				res, err := run.CallTool(ctx, &mcp.CallToolParams{Name: "tracker__get_ticket", Arguments: map[string]any{"id": 7}})
				if err != nil || res.IsError {
					t.Fatalf("call %d: %v, %s; want the ticket", i+1, err, servertest.Text(res))
				}
			}
			if msg := servertest.CallErr(t, run, "tracker__get_ticket", map[string]any{"id": 7}); !strings.Contains(msg, c.want) || !strings.Contains(msg, "set_budget") {
				t.Errorf("third call answered %q; want %q and how to raise it", msg, c.want)
			}
			if n := tr.Calls(); n != 2 {
				t.Errorf("the tracker got %d tools/call requests; want 2 (the refused one never goes out)", n)
			}
			rep, err := h.Store.Spend(ctx, time.Time{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Total.OutsideCalls != 2 || rep.Total.Money != domain.USD(c.usd) {
				t.Errorf("org spend = %d outside calls and %s; want 2 and $%v", rep.Total.OutsideCalls, rep.Total.Money, c.usd)
			}
			budgets := servertest.Call[struct {
				Budgets []struct {
					State string `json:"state"`
					Spend struct {
						OutsideCalls int64   `json:"outsideCalls"`
						USD          float64 `json:"usd"`
					} `json:"spend"`
				} `json:"budgets"`
			}](t, owner, "list_budgets", map[string]any{})
			if len(budgets.Budgets) != 1 || budgets.Budgets[0].State != "exceeded" || budgets.Budgets[0].Spend.OutsideCalls != 2 {
				t.Errorf("list_budgets = %+v; want w-granted's budget exceeded with 2 outside calls", budgets.Budgets)
			}
		})
	}
}
