package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/agent/llm"
	"github.com/helixml/helix-org/agent/llm/llmtest"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

// budgetScript is the model of the budget test: every call reports 300
// input and 100 output tokens. Asked to "work", it publishes step after
// step and never finishes; to anything else on s-inbox it replies once
// and ends; on s-other it answers with text; with no trigger (a hire) it
// has nothing to do.
func budgetScript(turn llmtest.Turn) llmtest.Reply {
	usage := llm.Usage{InputTokens: 300, OutputTokens: 100}
	trigs := llmtest.Triggers(turn.Prompt())
	switch {
	case len(trigs) == 0:
		return llmtest.Reply{Text: "Nothing to do.", Usage: usage}
	case trigs[0].Stream == "s-other":
		return llmtest.Reply{Text: "pong", Usage: usage}
	case trigs[0].Body == "work":
		step := fmt.Sprintf("step %d", turn.CallsTo("publish")+1)
		return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("publish", map[string]any{"stream": "s-inbox", "body": step})}, Usage: usage}
	case turn.CallsTo("publish") == 0:
		return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("publish", map[string]any{"stream": "s-inbox", "body": "echo: " + trigs[0].Body})}, Usage: usage}
	}
	return llmtest.Reply{Text: "Replied.", Usage: usage}
}

// waitUntil waits, on store commits, for cond to hold.
func waitUntil(t *testing.T, st *store.Store, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		changed := st.Changed()
		if cond() {
			return
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("timed out waiting until %s", what)
		}
	}
}

// inboxKinds lists the kinds of the notices in a worker's inbox.
func inboxKinds(t *testing.T, st *store.Store, worker string) []string {
	t.Helper()
	evs, err := st.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{domain.InboxStream(worker)}})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, ev := range evs {
		var x struct{ Kind, Target string }
		json.Unmarshal(ev.Message.Extra, &x)
		kinds = append(kinds, x.Kind+" "+x.Target)
	}
	return kinds
}

func runSpend(t *testing.T, args ...string) string {
	t.Helper()
	cmd := newSpendCmd()
	var out bytes.Buffer
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	if err := cmd.ExecuteContext(t.Context()); err != nil {
		t.Fatalf("spend %v: %v\n%s", args, err, out.String())
	}
	return out.String()
}

// TestBudgetStopsAWorker is a worker's 1,000-token daily budget on the
// real server, with the built-in agent calling a fake provider (400
// tokens a call) through the relay: the second call crosses the soft
// threshold (one notice each to the owner and the worker's manager), the
// third reaches the hard limit, its answer is replaced by "budget
// exceeded" and the run fails so, in `helix-org activations` and on the
// activation log; the next event waits — while another worker's runs go
// on — until the manager raises the budget, and then runs. Spend by
// worker, stream and model, in list_budgets and `helix-org spend --json`,
// is exactly what the provider reported.
func TestBudgetStopsAWorker(t *testing.T) {
	for _, format := range llmFormats {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			fake := llmtest.New(t, format, budgetScript)
			clock := storetest.NewClock(time.Date(2026, 3, 4, 18, 0, 0, 0, time.UTC))
			db := filepath.Join(t.TempDir(), "helix-org.db")
			st, err := store.Open(t.Context(), db, store.Options{Synchronous: "NORMAL", Now: clock.Now})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			st.SetSetting(t.Context(), agent.RuntimeSetting, agent.RuntimeBuiltin)
			useFake(t, st, format, fake)
			if err := st.SetSetting(t.Context(), domain.PricesSetting, `{"fake-model": {"input": 3, "output": 15}}`); err != nil {
				t.Fatal(err)
			}
			base, _, owner := startServe(t, st, io.Discard)
			call := func(name string, args map[string]any) {
				servertest.Call[map[string]any](t, owner, name, args)
			}
			call("create_role", map[string]any{"id": "r-lead", "title": "Lead", "content": "Lead the echo desk."})
			call("create_position", map[string]any{"id": "p-lead", "role": "r-lead", "title": "Lead"})
			call("hire_worker", map[string]any{"id": "w-lead", "position": "p-lead", "kind": "human", "name": "Lead", "grants": []string{"set_budget", "list_budgets"}})
			call("set_org_role", map[string]any{"worker": "w-lead", "role": "admin"}) // budgets are an admin's
			call("create_role", map[string]any{"id": "r-echo", "title": "Echo", "content": "Do as you are asked."})
			call("create_position", map[string]any{"id": "p-echo", "role": "r-echo", "title": "Echo", "reportsTo": "p-lead"})
			call("create_stream", map[string]any{"id": "s-inbox", "name": "inbox"})
			call("create_stream", map[string]any{"id": "s-other", "name": "other"})
			call("hire_worker", map[string]any{"id": "w-echo", "position": "p-echo", "kind": "ai", "name": "Echo", "grants": []string{"publish"}})
			call("hire_worker", map[string]any{"id": "w-other", "position": "p-echo", "kind": "ai", "name": "Other"})
			call("invite_workers", map[string]any{"stream": "s-inbox", "workers": []string{"w-echo", "w-owner"}})
			call("subscribe", map[string]any{"stream": "s-other", "worker": "w-other"})
			waitIdle(t, st) // the two hire runs: one call each, yesterday
			clock.Advance(12 * time.Hour)

			lead, err := servertest.Dial(t, base+"/workers/w-lead/mcp", servertest.Token(t, st, "w-lead"))
			if err != nil {
				t.Fatal(err)
			}
			servertest.Call[map[string]any](t, lead, "set_budget", map[string]any{"scope": "worker", "target": "w-echo", "window": "day", "tokens": 1000})
			call("set_budget", map[string]any{"scope": "stream", "target": "s-inbox", "window": "total", "tokens": 1000000})

			acts := func(w string) []domain.Activation {
				as, err := st.ListActivations(t.Context(), w)
				if err != nil {
					t.Fatal(err)
				}
				return as
			}
			call("publish", map[string]any{"stream": "s-inbox", "body": "work"})
			waitUntil(t, st, "w-echo's work run has ended", func() bool { as := acts("w-echo"); return len(as) == 2 && as[1].Status != domain.ActivationRunning })
			run := acts("w-echo")[1]
			wantErr := "budget exceeded: worker w-echo's daily budget of 1,000 tokens is used up: 1,200 tokens and $0.0072 spent today (UTC) by the calls of w-echo. " +
				"No more model calls or runs for it until 2026-03-06T00:00:00Z, when the window ends, or until the limit is raised: w-lead or w-owner can raise it with set_budget."
			if run.Status != domain.ActivationFailed || run.Error != wantErr || run.InputTokens != 900 || run.OutputTokens != 300 {
				t.Errorf("work run = %s %q, %d/%d tokens; want failed with %q after 3 calls (900/300)", run.Status, run.Error, run.InputTokens, run.OutputTokens, wantErr)
			}
			if n := len(fake.Turns()); n != 5 {
				t.Errorf("the provider saw %d calls, want 5: two hires and three of the work run", n)
			}
			evs, _ := st.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{"s-inbox"}})
			var steps []string
			for _, ev := range evs {
				if ev.Source == "w-echo" {
					steps = append(steps, ev.Message.Body)
				}
			}
			if diff := cmp.Diff([]string{"step 1", "step 2"}, steps); diff != "" {
				t.Errorf("w-echo published (-want +got): the third answer must not reach it\n%s", diff)
			}
			out := runActivations(t, "--db", db, "--worker", "w-echo")
			wantAll(t, "activations", out, "failed", "budget exceeded: worker w-echo's daily budget of 1,000 tokens is used up")
			o := builtinOrg{db: db, st: st, owner: owner, fake: fake}
			wantAll(t, "activation log", o.logOf(t), "HTTP 402", "exit: failed: "+wantErr)
			for _, w := range []string{"w-owner", "w-lead"} {
				if diff := cmp.Diff([]string{"budget_soft w-echo", "budget_hard w-echo"}, inboxKinds(t, st, w)); diff != "" {
					t.Errorf("%s's inbox (-want +got):\n%s", w, diff)
				}
			}

			// The next event waits; another worker's runs go on meanwhile
			// (the dispatcher sees both, and starts only w-other).
			clock.Advance(time.Minute) // runs started from here sort after the work run
			call("publish", map[string]any{"stream": "s-inbox", "body": "hello"})
			call("publish", map[string]any{"stream": "s-other", "body": "ping"})
			waitUntil(t, st, "w-other's ping run has ended", func() bool { as := acts("w-other"); return len(as) == 2 && as[1].Status == domain.ActivationSucceeded })
			if n := len(acts("w-echo")); n != 2 {
				t.Errorf("w-echo ran %d activations with its budget spent, want still 2", n)
			}
			// (What `helix-org triggers` shows, read with the server's clock.)
			waiting, err := st.ListTriggers(t.Context(), store.TriggerQuery{Worker: "w-echo", Statuses: []domain.TriggerStatus{domain.TriggerPending}})
			if err != nil || len(waiting) != 1 || !strings.HasPrefix(waiting[0].Reason, "waits: worker w-echo's daily budget is exceeded") {
				t.Errorf("w-echo's pending triggers = %+v, %v; want the hello trigger waiting on the budget", waiting, err)
			}

			raised := servertest.Call[setBudgetResult](t, lead, "set_budget", map[string]any{"scope": "worker", "target": "w-echo", "window": "day", "tokens": 5000})
			if raised.Budget.State != "ok" || !strings.Contains(raised.Message, "Runs this budget held, if any, start now.") {
				t.Errorf("raise = %+v", raised)
			}
			reply := waitForReply(t, owner, "s-inbox", "w-echo", evs[len(evs)-1].Seq)
			waitUntil(t, st, "w-echo's hello run has ended", func() bool { as := acts("w-echo"); return len(as) == 3 && as[2].Status != domain.ActivationRunning })
			if reply.Message.Body != "echo: hello" || acts("w-echo")[2].Status != domain.ActivationSucceeded {
				t.Errorf("after the raise: reply %q, run %+v", reply.Message.Body, acts("w-echo")[2])
			}

			// Spend is what the provider reported: 8 calls of 300/100 at
			// $3/$15 per million, $0.0024 each.
			if n := len(fake.Turns()); n != 8 {
				t.Fatalf("the provider saw %d calls, want 8", n)
			}
			type spend struct {
				Calls, InputTokens, OutputTokens, Tokens, UnpricedTokens int64
				USD                                                      float64
			}
			calls := func(n int64) spend {
				return spend{Calls: n, InputTokens: 300 * n, OutputTokens: 100 * n, Tokens: 400 * n, USD: float64(n) * 24 / 10000}
			}
			listed := servertest.Call[struct {
				Budgets []struct {
					Scope, Target, State string
					Spend                spend
				}
			}](t, lead, "list_budgets", map[string]any{})
			got := map[string]spend{}
			for _, b := range listed.Budgets {
				got[b.Scope+"/"+b.Target] = b.Spend
			}
			if diff := cmp.Diff(map[string]spend{"worker/w-echo": calls(5), "stream/s-inbox": calls(5)}, got, approxUSD); diff != "" {
				t.Errorf("list_budgets spend (-want +got):\n%s", diff)
			}
			var rep struct {
				Total   spend
				Workers []struct {
					Worker string
					spend
				}
				Streams []struct {
					Stream string
					spend
				}
				Models []struct {
					Model  string
					Priced bool
					spend
				}
			}
			if err := json.Unmarshal([]byte(runSpend(t, "--db", db, "--json", "--period", "all")), &rep); err != nil {
				t.Fatal(err)
			}
			byKey := map[string]spend{"total": rep.Total}
			for _, w := range rep.Workers {
				byKey["worker "+w.Worker] = w.spend
			}
			for _, s := range rep.Streams {
				byKey["stream "+s.Stream] = s.spend
			}
			for _, m := range rep.Models {
				byKey[fmt.Sprintf("model %s priced=%v", m.Model, m.Priced)] = m.spend
			}
			want := map[string]spend{"total": calls(8), "worker w-echo": calls(6), "worker w-other": calls(2),
				"stream s-org": calls(2), "stream s-inbox": calls(5), "stream s-other": calls(1), "model fake-model priced=true": calls(8)}
			if diff := cmp.Diff(want, byKey, approxUSD); diff != "" {
				t.Errorf("spend --json --period all (-want +got):\n%s", diff)
			}
			today := runSpend(t, "--db", db, "--since", "2026-03-05", "--until", "2026-03-06")
			wantAll(t, "spend --period day", today, "Spend from 2026-03-05T00:00:00Z to 2026-03-06T00:00:00Z (UTC)", "w-echo   5      1500       500         2000          $0.012",
				"s-inbox  5      1500       500         2000          $0.012", "all      6      1800       600         2400          $0.0144")
		})
	}
}

// setBudgetResult is set_budget's answer as a client reads it.
type setBudgetResult struct {
	Budget struct {
		State string
	}
	Message string
}

// approxUSD compares dollars to the nano-dollar: JSON floats of sums.
var approxUSD = cmp.Comparer(func(a, b float64) bool { d := a - b; return d < 1e-9 && d > -1e-9 })

// TestSpendAndPricesInput: bad periods and prices are refused with the
// flag or key and what is valid; an empty ledger says so.
func TestSpendAndPricesInput(t *testing.T) {
	db := newDB(t)
	mustRun(t, "bootstrap", "--db", db)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"spend", "--period", "week"}, `--period: unknown period "week" (valid: day, month, all)`},
		{[]string{"spend", "--since", "yesterday"}, `--since: "yesterday" is neither an RFC 3339 time (2026-03-01T00:00:00Z) nor a date (2026-03-01)`},
		{[]string{"spend", "--since", "2026-03-02", "--until", "2026-03-01"}, "--until 2026-03-01 is not after --since 2026-03-02"},
		{[]string{"spend", "--period", "day", "--since", "2026-03-01"}, "give --period or --since/--until, not both"},
		{[]string{"config", "set", "llm.prices", `{"m": {"input": 3, "output": -1}}`}, "llm.prices: m: prices must be zero or more US dollars per million tokens"},
		{[]string{"config", "set", "llm.prices", `{"m": {"in": 3}}`}, `json: unknown field "in"`},
		{[]string{"config", "set", "llm.prices.default", `{"input": -3, "output": 15}`}, "llm.prices.default: prices must be zero or more US dollars per million tokens"},
		{[]string{"config", "set", "llm.prices", `{"m": ` + strings.Repeat("[", 200) + strings.Repeat("]", 200) + `}`}, "llm.prices: is JSON nested more than 100 levels deep; the limit is 100"},
		{[]string{"config", "set", "llm.prices.default", `{"input": 3, "out": 15}`}, `llm.prices.default: want {"input": <USD per million input tokens>, "output": <USD per million output tokens>}: json: unknown field "out"`},
		{[]string{"config", "set", "mcp.prices", `{"github": -0.001}`}, "mcp.prices: github: a price must be zero or more US dollars per call"},
		{[]string{"config", "set", "mcp.prices", `{"github": {"per_call": 1}}`}, `mcp.prices: want {"<server>__<tool>" or "<server>": <US dollars per call>, …}`},
	}
	for _, tt := range tests {
		_, _, err := run(t, "", append(tt.args, "--db", db)...)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("helix-org %v: %v, want %q", tt.args, err, tt.want)
		}
	}
	if out := mustRun(t, "spend", "--db", db, "--period", "all"); !strings.Contains(out, "Spend from the start to now (UTC)\n\nNo model calls in this period.") {
		t.Errorf("spend on an empty ledger:\n%s", out)
	}
	if out := mustRun(t, "config", "set", "llm.prices", `{"claude-sonnet-4-5": {"input": 3, "output": 15}}`, "--db", db); !strings.Contains(out, "llm.prices = ") {
		t.Errorf("config set llm.prices: %s", out)
	}
}

// TestSpendShowsOutsideCalls: calls of outside tools are on the spend
// report under their tool's name, counted apart from model calls and
// priced by mcp.prices.
func TestSpendShowsOutsideCalls(t *testing.T) {
	db := newDB(t)
	mustRun(t, "bootstrap", "--db", db)
	st, err := store.Open(t.Context(), db, store.Options{Transports: transports.Specs()})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := st.RecordOutsideCall(t.Context(), store.OutsideCall{Worker: "w-owner", Tool: "github__issue_read", Cost: domain.USD(0.001)}); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	out := runSpend(t, "--db", db, "--period", "all")
	for _, want := range []string{"MODEL               CALLS  OUTSIDE CALLS  IN TOKENS", "github__issue_read  0      2              0          0           0             $0.002", "w-owner  0      2"} {
		if !strings.Contains(out, want) {
			t.Errorf("spend lacks %q:\n%s", want, out)
		}
	}
	var rep struct{ Total struct{ OutsideCalls int64 } }
	if err := json.Unmarshal([]byte(runSpend(t, "--db", db, "--json", "--period", "all")), &rep); err != nil || rep.Total.OutsideCalls != 2 {
		t.Errorf("spend --json total = %+v, %v; want 2 outside calls", rep.Total, err)
	}
}
