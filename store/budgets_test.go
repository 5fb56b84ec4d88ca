package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

// budgetOrg is seed plus a line of the chart for budgets:
//
//	p-lead (w-lead, human) reports to p-owner
//	p-bot (w-bot, ai) reports to p-lead; w-bot follows s-a and s-b
//
// w-bot's hire run is over, so its only triggers are what a test publishes.
func budgetOrg(t *testing.T) (*store.Store, *storetest.Clock) {
	t.Helper()
	clock := storetest.NewClock(time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC))
	st := storetest.NewWithClock(t, clock.Now)
	seed(t, st)
	ctx := t.Context()
	st.CreatePosition(ctx, "w-owner", domain.Position{ID: "p-lead", RoleID: "r-a", Title: "Lead"})
	st.CreatePosition(ctx, "w-owner", domain.Position{ID: "p-bot", RoleID: "r-a", Title: "Bot", ReportsTo: "p-lead"})
	st.CreateStream(ctx, "w-owner", domain.Stream{ID: "s-b", Name: "b", Transport: domain.Transport{Kind: domain.TransportLocal}})
	for _, w := range []domain.Worker{{ID: "w-lead", Kind: domain.WorkerHuman, PositionID: "p-lead", Name: "lead"},
		{ID: "w-bot", Kind: domain.WorkerAI, PositionID: "p-bot", Name: "bot"}} {
		if _, err := st.HireWorker(ctx, "w-owner", w, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range []string{"s-a", "s-b"} {
		if _, err := st.Subscribe(ctx, "", s, "w-bot"); err != nil {
			t.Fatal(err)
		}
	}
	finish(t, st, claim(t, st, "w-bot", "a-hire"))
	return st, clock
}

// publishOn appends one event from the owner on each stream.
func publishOn(t *testing.T, st *store.Store, streams ...string) {
	t.Helper()
	for _, s := range streams {
		if _, err := st.Append(t.Context(), domain.Event{StreamID: s, Source: "w-owner", Message: domain.Message{Body: "work on " + s}}, store.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

func claim(t *testing.T, st *store.Store, worker, id string) domain.Activation {
	t.Helper()
	a, _, _, err := st.Claim(t.Context(), worker, id, time.Hour)
	if err != nil {
		t.Fatalf("claim %s for %s: %v", id, worker, err)
	}
	return a
}

func finish(t *testing.T, st *store.Store, a domain.Activation) {
	t.Helper()
	a.Status = domain.ActivationSucceeded
	if err := st.FinishActivation(t.Context(), a, domain.Event{StreamID: domain.ActivationStreamPrefix + a.WorkerID, Message: domain.Message{Body: "exit"}}); err != nil {
		t.Fatal(err)
	}
}

// call records one relayed call of 300 input and 100 output tokens.
func call(t *testing.T, st *store.Store, activation string) *domain.BudgetExceededError {
	t.Helper()
	stop, err := st.RecordUsage(t.Context(), activation, store.Usage{Model: "m", Input: 300, Output: 100})
	if err != nil {
		t.Fatal(err)
	}
	return stop
}

// reserve asks to hold a call of at most 10 tokens, and gives the hold
// back at once: whether a call may start.
func reserve(st *store.Store, activation string) error {
	hold, err := st.ReserveModelCall(context.Background(), activation, store.Reservation{Model: "m", Tokens: 10})
	if err != nil {
		return err
	}
	return st.ReleaseModelCall(context.Background(), hold)
}

func setBudget(t *testing.T, st *store.Store, b domain.Budget) domain.BudgetStatus {
	t.Helper()
	s, err := st.SetBudget(t.Context(), "w-owner", b)
	if err != nil {
		t.Fatalf("set budget %+v: %v", b, err)
	}
	return s
}

// notices lists the budget notices in a worker's inbox by kind.
func notices(t *testing.T, st *store.Store, worker string) []string {
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

func pendingWorkers(t *testing.T, st *store.Store) []string {
	t.Helper()
	ws, err := st.WorkersWithPending(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

// TestWorkerBudget: a 1,000-token daily budget (soft at 800) over calls
// of 400: the second call sends one soft notice each to the worker's
// nearest human manager and the owner; the third reaches the hard limit,
// is on the ledger and says so, with one hard notice each; from then on
// calls are refused, the run is on record as stopped, and the worker's
// triggers wait, pending, with the budget as their reason, until the
// limit is raised, which releases them; a new day starts from zero.
func TestWorkerBudget(t *testing.T) {
	t.Parallel()
	st, clock := budgetOrg(t)
	ctx := t.Context()
	setBudget(t, st, domain.Budget{Scope: domain.BudgetWorker, Target: "w-bot", Window: domain.BudgetDay,
		Hard: domain.Limit{Tokens: 1000}, Soft: domain.Limit{Tokens: 800}})
	publishOn(t, st, "s-a")
	run := claim(t, st, "w-bot", "a-1")

	if stop := call(t, st, "a-1"); stop != nil {
		t.Fatalf("first call stopped: %v", stop)
	}
	if n := notices(t, st, "w-lead"); len(n) != 0 {
		t.Errorf("notices at 400 tokens: %v", n)
	}
	if stop := call(t, st, "a-1"); stop != nil {
		t.Fatalf("second call stopped: %v", stop)
	}
	stop := call(t, st, "a-1")
	if stop == nil {
		t.Fatal("the third call (1,200 tokens) did not reach the hard limit")
	}
	want := "budget exceeded: worker w-bot's daily budget of 1,000 tokens is used up: 1,200 tokens spent today (UTC) by the calls of w-bot " +
		"(1,200 tokens on models not in llm.prices, which cost no money: m). No more model calls or runs for it until 2026-03-05T00:00:00Z, when the window ends, or until the limit is raised: " +
		"w-lead or w-owner can raise it with set_budget."
	if stop.Error() != want {
		t.Errorf("stop =\n%s\nwant\n%s", stop, want)
	}
	if mc, _ := st.ModelCalls(ctx, "a-1"); len(mc) != 3 {
		t.Errorf("ledger holds %d calls, want 3: the stopped call was charged", len(mc))
	}
	for _, w := range []string{"w-lead", "w-owner"} {
		if diff := cmp.Diff([]string{"budget_soft w-bot", "budget_hard w-bot"}, notices(t, st, w)); diff != "" {
			t.Errorf("%s's inbox (-want +got):\n%s", w, diff)
		}
	}
	if msg, _ := st.BudgetStop(ctx, "a-1"); msg != stop.Error() {
		t.Errorf("BudgetStop(a-1) = %q", msg)
	}
	var refused *domain.BudgetExceededError
	if err := reserve(st, "a-1"); !errors.As(err, &refused) || refused.Status.Spend.Tokens() != 1200 {
		t.Errorf("a reservation after the stop = %v, want a budget stop at 1,200 tokens", err)
	}
	// A call already in flight lands over the limit: stopped, no more notices.
	if call(t, st, "a-1") == nil || len(notices(t, st, "w-lead")) != 2 {
		t.Errorf("a fourth call was not stopped, or sent another notice: %v", notices(t, st, "w-lead"))
	}
	finish(t, st, run)

	publishOn(t, st, "s-a")
	if ws := pendingWorkers(t, st); slices.Contains(ws, "w-bot") {
		t.Errorf("workers with pending triggers = %v; w-bot's budget holds them", ws)
	}
	if _, _, _, err := st.Claim(ctx, "w-bot", "a-2", time.Hour); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("Claim over a reached budget: %v, want nothing to claim", err)
	}
	trigs, _ := st.ListTriggers(ctx, store.TriggerQuery{Worker: "w-bot", Statuses: []domain.TriggerStatus{domain.TriggerPending}})
	if len(trigs) != 1 || trigs[0].Reason != "waits: worker w-bot's daily budget is exceeded; it runs once the limit is raised (set_budget) or the window ends" {
		t.Errorf("pending triggers = %+v, want one waiting on the budget", trigs)
	}

	raised := setBudget(t, st, domain.Budget{Scope: domain.BudgetWorker, Target: "w-bot", Window: domain.BudgetDay, Hard: domain.Limit{Tokens: 5000}, Soft: domain.Limit{Tokens: 4000}})
	if raised.State != domain.BudgetOK || raised.Spend.Tokens() != 1600 || raised.Spend.Calls != 4 {
		t.Errorf("raised budget = %+v, want ok at 1,600 tokens in 4 calls", raised)
	}
	if ws := pendingWorkers(t, st); !slices.Contains(ws, "w-bot") {
		t.Errorf("after the raise, workers with pending triggers = %v, want w-bot", ws)
	}
	if err := reserve(st, "a-1"); err != nil {
		t.Errorf("a reservation after the raise: %v", err)
	}

	// Lowered below the spend, it holds again at once; tomorrow it does not.
	if low := setBudget(t, st, domain.Budget{Scope: domain.BudgetWorker, Target: "w-bot", Window: domain.BudgetDay, Hard: domain.Limit{Tokens: 1000}}); low.State != domain.BudgetExceeded {
		t.Errorf("budget lowered below the spend: %s, want exceeded", low.State)
	}
	if ws := pendingWorkers(t, st); slices.Contains(ws, "w-bot") {
		t.Errorf("lowered below the spend, the budget does not hold: %v", ws)
	}
	clock.Advance(14 * time.Hour)
	if ws := pendingWorkers(t, st); !slices.Contains(ws, "w-bot") {
		t.Errorf("the next day, workers with pending triggers = %v, want w-bot", ws)
	}
	bs, err := st.ListBudgets(ctx, "w-lead", store.BudgetFilter{})
	if err != nil || len(bs) != 1 || bs[0].State != domain.BudgetOK || bs[0].Spend.Calls != 0 || !bs[0].WindowStart.Equal(time.Date(2026, 3, 5, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("the next day w-lead lists %+v, %v; want w-bot's budget at zero from 2026-03-05", bs, err)
	}
}

// TestStreamBudget: a run triggered on two streams counts fully against
// each; a stream budget reached holds only that stream's triggers — the
// worker's others run, and other workers' triggers on it wait too.
func TestStreamBudget(t *testing.T) {
	t.Parallel()
	st, _ := budgetOrg(t)
	ctx := t.Context()
	if _, err := st.HireWorker(ctx, "w-owner", domain.Worker{ID: "w-two", Kind: domain.WorkerAI, PositionID: "p-bot", Name: "two"}, nil); err != nil {
		t.Fatal(err)
	}
	st.Subscribe(ctx, "", "s-a", "w-two")
	finish(t, st, claim(t, st, "w-two", "a-two-hire"))
	setBudget(t, st, domain.Budget{Scope: domain.BudgetStream, Target: "s-a", Window: domain.BudgetTotal, Hard: domain.Limit{Tokens: 1000}})
	setBudget(t, st, domain.Budget{Scope: domain.BudgetStream, Target: "s-b", Window: domain.BudgetTotal, Hard: domain.Limit{Tokens: 100000}})

	publishOn(t, st, "s-a", "s-b")
	finish(t, st, claim(t, st, "w-two", "a-two")) // w-two's s-a trigger, not called
	run := claim(t, st, "w-bot", "a-1")
	call(t, st, "a-1")
	call(t, st, "a-1")
	if stop := call(t, st, "a-1"); stop == nil || stop.Status.Scope != domain.BudgetStream || stop.Status.Target != "s-a" {
		t.Fatalf("stop = %v, want stream s-a's", stop)
	}
	finish(t, st, run)
	bs, _ := st.ListBudgets(ctx, "w-owner", store.BudgetFilter{Scope: domain.BudgetStream})
	got := map[string]int64{}
	for _, b := range bs {
		got[b.Target] = b.Spend.Tokens()
	}
	if diff := cmp.Diff(map[string]int64{"s-a": 1200, "s-b": 1200}, got); diff != "" {
		t.Errorf("stream spend (-want +got):\n%s", diff)
	}

	publishOn(t, st, "s-a", "s-b")
	_, trigs, _, err := st.Claim(ctx, "w-bot", "a-2", time.Hour)
	if err != nil || len(trigs) != 1 || trigs[0].Event.StreamID != "s-b" {
		t.Fatalf("Claim = %+v, %v; want only the s-b trigger", trigs, err)
	}
	if ws := pendingWorkers(t, st); len(ws) != 0 {
		t.Errorf("workers with pending triggers = %v; the only ones left are on s-a", ws)
	}
	left, _ := st.ListTriggers(ctx, store.TriggerQuery{Statuses: []domain.TriggerStatus{domain.TriggerPending}})
	if len(left) != 2 || left[0].StreamID != "s-a" || left[1].StreamID != "s-a" || !strings.Contains(left[0].Reason, "stream s-a's total budget is exceeded") {
		t.Errorf("pending = %+v, want w-bot's and w-two's s-a triggers waiting on its budget", left)
	}
}

// TestOrgBudget: the org's budget reached, nothing runs.
func TestOrgBudget(t *testing.T) {
	t.Parallel()
	st, _ := budgetOrg(t)
	setBudget(t, st, domain.Budget{Scope: domain.BudgetOrg, Window: domain.BudgetMonth, Hard: domain.Limit{Money: domain.USD(0.001)}})
	publishOn(t, st, "s-a")
	run := claim(t, st, "w-bot", "a-1")
	stop, err := st.RecordUsage(t.Context(), "a-1", store.Usage{Model: "m", Input: 300, Output: 100, Cost: domain.USD(0.0024), Priced: true})
	if err != nil || stop == nil || !strings.Contains(stop.Error(), "the org's monthly budget of $0.001 is used up: 400 tokens and $0.0024 spent this month (UTC) by the whole org") ||
		!strings.HasSuffix(stop.Error(), "w-owner can raise it with set_budget.") {
		t.Fatalf("stop = %v, %v", stop, err)
	}
	finish(t, st, run)
	publishOn(t, st, "s-a", "s-b")
	if ws := pendingWorkers(t, st); len(ws) != 0 {
		t.Errorf("workers with pending triggers = %v, want none while the org's budget holds", ws)
	}
	if n := notices(t, st, "w-owner"); !slices.Equal(n, []string{"budget_hard "}) {
		t.Errorf("owner's notices = %v, want one budget_hard", n)
	}
}

// TestSpend: spend by worker, stream and model is exactly the usage
// recorded, money only for priced calls, in a period.
func TestSpend(t *testing.T) {
	t.Parallel()
	st, clock := budgetOrg(t)
	ctx := t.Context()
	publishOn(t, st, "s-a", "s-b")
	run := claim(t, st, "w-bot", "a-1")
	for _, u := range []store.Usage{{Model: "m-priced", Input: 1000, Output: 200, Cost: domain.USD(0.006), Priced: true}, {Model: "m-free", Input: 50, Output: 5}} {
		if _, err := st.RecordUsage(ctx, "a-1", u); err != nil {
			t.Fatal(err)
		}
	}
	finish(t, st, run)
	clock.Advance(48 * time.Hour)
	publishOn(t, st, "s-a")
	later := claim(t, st, "w-bot", "a-2")
	st.RecordUsage(ctx, "a-2", store.Usage{Model: "m-priced", Input: 10, Output: 1, Cost: domain.USD(0.00005), Priced: true})
	finish(t, st, later)

	rep, err := st.Spend(ctx, time.Time{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	total := domain.Spend{Calls: 3, InputTokens: 1060, OutputTokens: 206, Money: domain.USD(0.00605), UnpricedTokens: 55, UnpricedModels: []string{"m-free"}}
	if diff := cmp.Diff(total, rep.Total); diff != "" {
		t.Errorf("total (-want +got):\n%s", diff)
	}
	a1 := domain.Spend{Calls: 2, InputTokens: 1050, OutputTokens: 205, Money: domain.USD(0.006), UnpricedTokens: 55}
	a2 := domain.Spend{Calls: 1, InputTokens: 10, OutputTokens: 1, Money: domain.USD(0.00005)}
	sum := func(a, b domain.Spend) domain.Spend {
		return domain.Spend{Calls: a.Calls + b.Calls, InputTokens: a.InputTokens + b.InputTokens, OutputTokens: a.OutputTokens + b.OutputTokens, Money: a.Money + b.Money, UnpricedTokens: a.UnpricedTokens + b.UnpricedTokens}
	}
	want := store.SpendReport{Total: total,
		Workers: []store.SpendLine{{Key: "w-bot", Spend: sum(a1, a2)}},
		Streams: []store.SpendLine{{Key: "s-a", Spend: sum(a1, a2)}, {Key: "s-b", Spend: a1}},
		Models: []store.SpendLine{{Key: "m-free", Spend: domain.Spend{Calls: 1, InputTokens: 50, OutputTokens: 5, UnpricedTokens: 55, UnpricedModels: []string{"m-free"}}},
			{Key: "m-priced", Spend: domain.Spend{Calls: 2, InputTokens: 1010, OutputTokens: 201, Money: domain.USD(0.00605)}}}}
	if diff := cmp.Diff(want, rep); diff != "" {
		t.Errorf("spend report (-want +got):\n%s", diff)
	}
	since := clock.Now().Add(-time.Hour)
	if rep, _ := st.Spend(ctx, since, nil); !cmp.Equal(rep.Total, domain.Spend{Calls: 1, InputTokens: 10, OutputTokens: 1, Money: domain.USD(0.00005)}) {
		t.Errorf("spend since %s = %+v, want only a-2's call", since, rep.Total)
	}
	if rep, _ := st.Spend(ctx, time.Time{}, &since); rep.Total.Calls != 2 || len(rep.Streams) != 2 {
		t.Errorf("spend until %s = %+v, want a-1's two calls", since, rep)
	}
}

// TestSoftNoticeOncePerCrossing: a soft threshold warns once per window,
// and again after a raise puts it above the spend and it is crossed anew.
func TestSoftNoticeOncePerCrossing(t *testing.T) {
	t.Parallel()
	st, clock := budgetOrg(t)
	b := domain.Budget{Scope: domain.BudgetWorker, Target: "w-bot", Window: domain.BudgetDay, Hard: domain.Limit{Tokens: 10000}, Soft: domain.Limit{Tokens: 400}}
	setBudget(t, st, b)
	publishOn(t, st, "s-a")
	claim(t, st, "w-bot", "a-1")
	call(t, st, "a-1")
	call(t, st, "a-1")
	b.Soft.Tokens = 1000
	setBudget(t, st, b)
	call(t, st, "a-1")
	call(t, st, "a-1") // 1,600: past 1,000
	clock.Advance(24 * time.Hour)
	call(t, st, "a-1")
	call(t, st, "a-1")
	call(t, st, "a-1") // 1,200 the next day
	want := []string{"budget_soft w-bot", "budget_soft w-bot", "budget_soft w-bot"}
	if diff := cmp.Diff(want, notices(t, st, "w-lead")); diff != "" {
		t.Errorf("w-lead's notices (-want +got):\n%s", diff)
	}
}
