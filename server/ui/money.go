package ui

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

type moneyPage struct {
	Budgets   []budgetView
	BudgetErr string
	Period    spendPeriod
	Periods   []choice
	Measures  []choice
	// Spent is the period's spend, in words; SpendErr why it is not shown.
	Spent    string
	SpendErr string
	Charts   []barChart
	Runs     []topRun
	Scopes   []domain.BudgetScope
	Windows  []domain.BudgetWindow
}

// choice is one of a page's view options, linked unless it is the one shown.
type choice struct {
	Label, Href string
	Current     bool
}

// budgetView is one budget as list_budgets shows it, with a meter per
// measure it limits.
type budgetView struct {
	Scope, Target, Window string
	State                 string
	WindowEnd             *time.Time
	WhoCanRaise           []string
	Note                  string
	Meters                []budgetMeter
}

// budgetMeter is spend against one limit: "1,200 of 1,000 tokens".
type budgetMeter struct {
	Text  string
	Meter meter
}

// budgetJSON is a budget as list_budgets returns it.
type budgetJSON struct {
	Scope, Target, Window string
	WindowEnd             *time.Time
	Limit, Soft           struct {
		Tokens int64
		USD    float64
		Calls  int64
	}
	Spend struct {
		Tokens       int64
		USD          float64
		OutsideCalls int64
	}
	State       string
	WhoCanRaise []string
	Note        string
}

// topRun is one of the period's costliest runs, linked on its worker's page.
type topRun struct {
	store.RunSpend
	Link, Tokens string
}

// topRunsShown is how many of the costliest runs the page lists.
const topRunsShown = 10

// handleMoney shows what the org spends: budgets with their spend against
// each limit, spend over the period as charts by worker, stream and model,
// and the period's costliest runs. Budgets come through list_budgets, so
// a person sees those the tool shows them; spend is the owner's to see,
// or a manager's for the workers whose runs they may read.
func (u *UI) handleMoney(w http.ResponseWriter, r *http.Request, v *viewer) {
	ctx := r.Context()
	live := ""
	if v.Can("read_events") || v.Can("worker_log") { // what the live view watches through
		live = u.liveURL(ctx, "view", "money")
	}
	q := r.URL.Query()
	p := moneyPage{Period: periodOf(q.Get("period"), u.st.Now()), Scopes: domain.BudgetScopes, Windows: domain.BudgetWindows}
	got, err := invoke[struct{ Budgets []budgetJSON }](ctx, v, "list_budgets", nil)
	if err != nil {
		p.BudgetErr = err.Error()
	}
	for _, b := range got.Budgets {
		p.Budgets = append(p.Budgets, budgetViewOf(b))
	}
	if err := u.spendSection(ctx, v, q.Get("measure"), &p); err != nil {
		u.fail(w, r, v, err)
		return
	}
	for _, name := range []string{"day", "month"} {
		other := periodOf(name, u.st.Now())
		p.Periods = append(p.Periods, choice{Label: other.Label, Href: u.cfg.Root + "/ui/money" + queryString("period", name, "measure", q.Get("measure")), Current: name == p.Period.Name})
	}
	u.render(w, r, http.StatusOK, "money", pageData{Title: "Money", Nav: "money", V: v, Live: live, Body: p})
}

// spendSection reads the period's spend, as far as the viewer may see it,
// into charts and the top runs.
func (u *UI) spendSection(ctx context.Context, v *viewer, measureName string, p *moneyPage) error {
	var among []string // every worker's, for the owner
	if !v.IsOwner() {
		visible, err := u.callsVisibleTo(ctx, v)
		if err != nil {
			return err
		}
		if len(visible) < 2 {
			p.SpendErr = "Spend is shown to the owner, and to managers for the workers below them: " + v.Worker.ID + " manages nobody."
			return nil
		}
		among = visible
	}
	per := p.Period
	series := map[store.SpendBy][]store.SeriesPoint{}
	for _, by := range []store.SpendBy{store.SpendByWorker, store.SpendByStream, store.SpendByModel} {
		points, err := u.st.SpendSeries(ctx, store.SeriesQuery{Edges: per.Edges, By: by, Workers: among})
		if err != nil {
			return err
		}
		series[by] = points
	}
	var total domain.Spend
	for _, pt := range series[store.SpendByWorker] { // each call once
		total = addSpend(total, pt.Spend)
	}
	p.Spent = total.Summary() + " " + per.Label
	m := measureOf(measureName, total)
	for _, name := range []string{"usd", "tokens"} {
		p.Measures = append(p.Measures, choice{Label: measureOf(name, total).Name, Href: u.cfg.Root + "/ui/money" + queryString("period", per.Name, "measure", name), Current: name == measureKey(m)})
	}
	byStream := stackedBars("By stream", per.Labels, series[store.SpendByStream], m)
	byStream.Note = "a run woken on several streams counts in each, so streams can add up to more than the total"
	p.Charts = []barChart{
		stackedBars("By worker", per.Labels, series[store.SpendByWorker], m),
		byStream,
		stackedBars("By model", per.Labels, series[store.SpendByModel], m),
	}
	until := per.Edges[len(per.Edges)-1]
	runs, err := u.st.TopRuns(ctx, per.Edges[0], &until, among, topRunsShown)
	if err != nil {
		return err
	}
	for _, run := range runs {
		// The worker's runs page lists runs started before ?before=: from
		// just after this one, it is at the top.
		after := run.StartedAt.Add(time.Microsecond).Format(time.RFC3339Nano)
		p.Runs = append(p.Runs, topRun{RunSpend: run, Tokens: domain.Thousands(run.Spend.Tokens()), Link: u.cfg.Root + "/ui/workers/" + run.WorkerID + queryString("before", after) + "#run-" + run.ActivationID})
	}
	return nil
}

// spendPeriod is the stretch of time the charts cover, cut into buckets:
// today by the hour or this month by the day, in UTC like budget windows.
type spendPeriod struct {
	Name, Label string
	Edges       []time.Time
	Labels      []string
}

func periodOf(name string, now time.Time) spendPeriod {
	if name == "day" {
		start := domain.BudgetDay.Start(now)
		p := spendPeriod{Name: name, Label: "today (UTC)"}
		for h := range 25 {
			p.Edges = append(p.Edges, start.Add(time.Duration(h)*time.Hour))
		}
		for _, e := range p.Edges[:24] {
			p.Labels = append(p.Labels, e.Format("15:04"))
		}
		return p
	}
	start := domain.BudgetMonth.Start(now)
	p := spendPeriod{Name: "month", Label: "this month (UTC)"}
	for d := start; !d.After(start.AddDate(0, 1, 0)); d = d.AddDate(0, 0, 1) {
		p.Edges = append(p.Edges, d)
	}
	for _, e := range p.Edges[:len(p.Edges)-1] {
		p.Labels = append(p.Labels, e.Format("2 Jan"))
	}
	return p
}

// measureOf is what the charts count: money, unless asked for tokens or
// nothing spent was priced.
func measureOf(name string, total domain.Spend) measure {
	if name == "tokens" || (name != "usd" && total.Money == 0) {
		return measure{Name: "Tokens", Of: func(p store.SeriesPoint) float64 { return float64(p.Tokens()) },
			Format: func(v float64) string { return domain.Thousands(int64(v)) }}
	}
	return measure{Name: "US dollars", Of: func(p store.SeriesPoint) float64 { return p.Money.Dollars() },
		Format: func(v float64) string { return domain.USD(v).String() }}
}

func measureKey(m measure) string {
	if m.Name == "Tokens" {
		return "tokens"
	}
	return "usd"
}

func addSpend(a, b domain.Spend) domain.Spend {
	return domain.Spend{Calls: a.Calls + b.Calls, OutsideCalls: a.OutsideCalls + b.OutsideCalls, InputTokens: a.InputTokens + b.InputTokens,
		OutputTokens: a.OutputTokens + b.OutputTokens, Money: a.Money + b.Money, UnpricedTokens: a.UnpricedTokens + b.UnpricedTokens}
}

// budgetViewOf draws a meter for each limit a budget sets, with its soft
// threshold marked.
func budgetViewOf(b budgetJSON) budgetView {
	bv := budgetView{Scope: b.Scope, Target: b.Target, Window: b.Window, State: b.State, WindowEnd: b.WindowEnd, WhoCanRaise: b.WhoCanRaise, Note: b.Note}
	add := func(spent, limit, soft float64, unit func(float64) string) {
		if limit <= 0 {
			return
		}
		text := fmt.Sprintf("%s of %s", unit(spent), unit(limit))
		bv.Meters = append(bv.Meters, budgetMeter{Text: text, Meter: newMeter(spent, limit, soft, b.State, text)})
	}
	tokens := func(v float64) string { return domain.Thousands(int64(v)) + " tokens" }
	add(float64(b.Spend.Tokens), float64(b.Limit.Tokens), float64(b.Soft.Tokens), tokens)
	add(b.Spend.USD, b.Limit.USD, b.Soft.USD, func(v float64) string { return domain.USD(v).String() })
	add(float64(b.Spend.OutsideCalls), float64(b.Limit.Calls), float64(b.Soft.Calls), func(v float64) string { return domain.Thousands(int64(v)) + " outside tool calls" })
	return bv
}
