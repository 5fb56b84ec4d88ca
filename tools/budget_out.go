package tools

import (
	"fmt"
	"strings"
	"time"

	"github.com/helixml/helix-org/domain"
)

// amountOut is a limit or threshold as tools show it: tokens and/or US
// dollars, absent when unlimited.
type amountOut struct {
	Tokens int64   `json:"tokens,omitempty" jsonschema:"tokens, input plus output"`
	USD    float64 `json:"usd,omitempty" jsonschema:"US dollars, from llm.prices and mcp.prices"`
	Calls  int64   `json:"calls,omitempty" jsonschema:"calls to outside MCP servers' tools"`
}

func amountOf(l domain.Limit) amountOut {
	return amountOut{Tokens: l.Tokens, USD: l.Money.Dollars(), Calls: l.Calls}
}

// spendOut is spend as tools show it.
type spendOut struct {
	Calls        int64   `json:"calls" jsonschema:"model calls"`
	OutsideCalls int64   `json:"outsideCalls,omitempty" jsonschema:"calls to outside MCP servers' tools, which a calls limit counts"`
	InputTokens  int64   `json:"inputTokens"`
	OutputTokens int64   `json:"outputTokens"`
	Tokens       int64   `json:"tokens" jsonschema:"input plus output: what a token limit counts"`
	USD          float64 `json:"usd" jsonschema:"money from llm.prices (and mcp.prices for outside tool calls) at the time of each call"`
	// Unpriced calls count tokens but no money.
	UnpricedTokens int64    `json:"unpricedTokens,omitempty" jsonschema:"tokens of calls to models llm.prices does not list: they count against token limits but cost no money"`
	UnpricedModels []string `json:"unpricedModels,omitempty"`
}

func spendOf(s domain.Spend) spendOut {
	return spendOut{Calls: s.Calls, OutsideCalls: s.OutsideCalls, InputTokens: s.InputTokens, OutputTokens: s.OutputTokens, Tokens: s.Tokens(), USD: s.Money.Dollars(),
		UnpricedTokens: s.UnpricedTokens, UnpricedModels: s.UnpricedModels}
}

// budgetOut is one budget with its spend in the current window.
type budgetOut struct {
	Scope       string     `json:"scope"`
	Target      string     `json:"target,omitempty"`
	Window      string     `json:"window"`
	WindowStart *time.Time `json:"windowStart,omitempty" jsonschema:"start of the current window (UTC); absent for total"`
	WindowEnd   *time.Time `json:"windowEnd,omitempty" jsonschema:"when the current window ends and spend counts from zero again; absent for total"`
	Limit       amountOut  `json:"limit" jsonschema:"the hard limit: at it model calls are refused and no new run starts for the scope"`
	Soft        amountOut  `json:"soft" jsonschema:"the soft threshold: crossing it sends a notice to whoCanRaise, once per window"`
	Spend       spendOut   `json:"spend" jsonschema:"spent in the current window"`
	State       string     `json:"state" jsonschema:"ok, soft (past the soft threshold) or exceeded (model calls refused, runs held)"`
	WhoCanRaise []string   `json:"whoCanRaise" jsonschema:"who hears of this budget and may change it: the scope's nearest human manager and the owner"`
	SetBy       string     `json:"setBy,omitempty"`
	UpdatedAt   time.Time  `json:"updatedAt"`
	Note        string     `json:"note,omitempty"`
}

func budgetOf(st domain.BudgetStatus) budgetOut {
	out := budgetOut{Scope: string(st.Scope), Target: st.Target, Window: string(st.Window), WindowEnd: st.WindowEnd,
		Limit: amountOf(st.Hard), Soft: amountOf(st.Soft), Spend: spendOf(st.Spend), State: string(st.State),
		WhoCanRaise: st.Raisers, SetBy: st.SetBy, UpdatedAt: st.UpdatedAt, Note: budgetNote(st)}
	if !st.WindowStart.IsZero() {
		t := st.WindowStart
		out.WindowStart = &t
	}
	return out
}

// budgetNote says what the state means and what happens next, in words an
// agent can act on.
func budgetNote(st domain.BudgetStatus) string {
	note := ""
	switch st.State {
	case domain.BudgetExceeded:
		note = (&domain.BudgetExceededError{Status: st}).Error()
	case domain.BudgetSoft:
		note = fmt.Sprintf("past the soft threshold (%s); at %s model calls are refused and runs wait.", st.Soft, st.Hard)
	}
	if st.Spend.UnpricedTokens > 0 && st.State != domain.BudgetExceeded {
		note += fmt.Sprintf(" %s tokens were spent on models llm.prices does not list (%s): they count against token limits but cost no money.",
			domain.Thousands(st.Spend.UnpricedTokens), strings.Join(st.Spend.UnpricedModels, ", "))
	}
	return strings.TrimSpace(note)
}
