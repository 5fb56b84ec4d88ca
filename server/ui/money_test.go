package ui_test

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// spendRun runs worker once as the dispatcher and relay would: claim its
// work, record each model call's usage, finish with the exit entry.
func spendRun(t *testing.T, st *store.Store, worker, activation string, usage ...store.Usage) {
	t.Helper()
	ctx := t.Context()
	a, _, _, err := st.Claim(ctx, worker, activation, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range usage {
		if _, err := st.RecordUsage(ctx, activation, u); err != nil {
			t.Fatal(err)
		}
	}
	a.Status = domain.ActivationSucceeded
	if err := st.FinishActivation(ctx, a, logEntry(worker, activation, domain.LogExit, "", "succeeded")); err != nil {
		t.Fatal(err)
	}
}

// TestMoneyPage: a budget set with the page's form shows with its spend
// against the limit; the period's spend shows as charts by worker,
// stream and model and the costliest runs link to the run; a bad limit
// is refused on the page with the field named and what was typed kept.
func TestMoneyPage(t *testing.T) {
	t.Parallel()
	o := newOrg(t)
	taskTeam(t, o)
	owner := o.client(t, "w-owner")
	set := func(form url.Values) (int, string) {
		form.Set("csrf", owner.csrf)
		form.Set("next", "/ui/money#budgets")
		form.Set("back", "/ui/money")
		return owner.post(t, "/ui/act/set_budget", form, nil)
	}
	for _, bad := range []struct {
		name string
		form url.Values
		want []string
	}{
		{"soft above 99", url.Values{"scope": {"worker"}, "target": {"w-b1"}, "window": {"day"}, "tokens:json": {"1000"}, "softPercent:json": {"150"}},
			[]string{"softPercent: must be between 1 and 99", `name="softPercent:json" type="number" min="1" max="99" value="150"`}},
		{"tokens not a number", url.Values{"scope": {"worker"}, "target": {"w-b1"}, "window": {"day"}, "tokens:json": {"lots"}},
			[]string{"set_budget: tokens: is not valid JSON", `value="lots"`}},
		{"no such window", url.Values{"scope": {"worker"}, "target": {"w-b1"}, "window": {"week"}, "tokens:json": {"1000"}},
			[]string{`window`, `week`}},
	} {
		if code, body := set(bad.form); code != http.StatusBadRequest || !containsAll(body, bad.want) {
			t.Errorf("%s: %d, want 400 with %q:\n%s", bad.name, code, bad.want, body)
		}
	}
	if code, _ := set(url.Values{"scope": {"worker"}, "target": {"w-b1"}, "window": {"day"}, "tokens:json": {"1000"}}); code != http.StatusSeeOther {
		t.Fatalf("set budget = %d, want 303", code)
	}
	_, body := owner.get(t, "/ui/money")
	for _, want := range []string{`id="budget-worker-w-b1-day"`, "0 tokens of 1,000 tokens", `<span class="pill status-ok">ok</span>`, "No run spent anything", "By worker"} {
		if !strings.Contains(body, want) {
			t.Errorf("before any spend, /ui/money lacks %q", want)
		}
	}

	spendRun(t, o.h.Store, "w-b1", "act-b1", store.Usage{Model: "m-big", Input: 700, Output: 150, Cost: domain.USD(0.012), Priced: true},
		store.Usage{Model: "m-small", Input: 40, Output: 10, Cost: domain.USD(0.0001), Priced: true})
	_, body = owner.get(t, "/ui/money")
	for _, want := range []string{"900 tokens of 1,000 tokens", `<span class="pill status-soft">soft</span>`, "900 tokens and $0.0121 this month (UTC)",
		`aria-label="By worker: w-b1 $0.0121"`, `aria-label="By model: m-big $0.012, m-small $0.0001"`, `aria-label="By stream: s-org $0.0121"`,
		`href="/ui/workers/w-b1?before=`, `#run-act-b1"><code>act-b1</code></a>`, `<td data-label="Tokens">900</td>`} {
		if !strings.Contains(body, want) {
			t.Errorf("after a run, /ui/money lacks %q", want)
		}
	}
	m := regexp.MustCompile(`href="(/ui/workers/w-b1\?before=[^"#]+)#run-act-b1"`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no link to the top run")
	}
	link := html.UnescapeString(m[1])
	if _, runs := owner.get(t, link); !strings.Contains(runs, `<tr id="run-act-b1">`) {
		t.Errorf("the top run's link %s does not list the run", link)
	}
	_, body = owner.get(t, "/ui/money?period=day&measure=tokens")
	for _, want := range []string{"Spend today (UTC)", ">00:00</text>", ">21:00</text>", `aria-label="By worker: w-b1 900"`} {
		if !strings.Contains(body, want) {
			t.Errorf("/ui/money by the hour in tokens lacks %q", want)
		}
	}
}

// TestMoneyPageRefuses: a person without list_budgets is told so, and
// one who manages nobody sees no one's spend.
func TestMoneyPageRefuses(t *testing.T) {
	t.Parallel()
	o := newOrg(t)
	taskTeam(t, o)
	spendRun(t, o.h.Store, "w-b1", "act-b1", store.Usage{Model: "m", Input: 10, Output: 1})
	code, body := o.client(t, "w-maya").get(t, "/ui/money")
	for _, want := range []string{`missing grant: worker w-maya does not hold grant &#34;list_budgets&#34;`, "Spend is shown to the owner, and to managers for the workers below them: w-maya manages nobody."} {
		if code != 200 || !strings.Contains(body, want) {
			t.Errorf("Maya's /ui/money = %d without %q", code, want)
		}
	}
	if strings.Contains(body, "act-b1") || strings.Contains(body, `action="/ui/act/set_budget"`) {
		t.Errorf("Maya sees a run she may not read, or a form for a tool she lacks")
	}
}

func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
