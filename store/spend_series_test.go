package store_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// spendDays is budgetOrg with three runs of w-bot on two days: a-1 on
// s-a and s-b at 10:00 on 4 March (a priced and an unpriced call), a-2
// on s-a an hour later, a-3 on s-b at 10:00 on 6 March.
func spendDays(t *testing.T) (*store.Store, time.Time) {
	st, clock := budgetOrg(t)
	ctx := t.Context()
	day := domain.BudgetDay.Start(clock.Now())
	runs := []struct {
		id      string
		streams []string
		after   time.Duration
		usage   []store.Usage
	}{
		{"a-1", []string{"s-a", "s-b"}, 0, []store.Usage{{Model: "m-priced", Input: 1000, Output: 200, Cost: domain.USD(0.006), Priced: true}, {Model: "m-free", Input: 50, Output: 5}}},
		{"a-2", []string{"s-a"}, time.Hour, []store.Usage{{Model: "m-priced", Input: 10, Output: 1, Cost: domain.USD(0.00005), Priced: true}}},
		{"a-3", []string{"s-b"}, 47 * time.Hour, []store.Usage{{Model: "m-priced", Input: 100, Output: 10, Cost: domain.USD(0.0005), Priced: true}}},
	}
	for _, r := range runs {
		clock.Advance(r.after)
		publishOn(t, st, r.streams...)
		run := claim(t, st, "w-bot", r.id)
		for _, u := range r.usage {
			if _, err := st.RecordUsage(ctx, r.id, u); err != nil {
				t.Fatal(err)
			}
		}
		finish(t, st, run)
	}
	return st, day
}

// TestSpendSeries: spend per day of a period, grouped by worker, stream
// and model, each bucket holding exactly the calls made in it; a filter
// to other workers finds nothing.
func TestSpendSeries(t *testing.T) {
	t.Parallel()
	st, day := spendDays(t)
	edges := []time.Time{day, day.AddDate(0, 0, 1), day.AddDate(0, 0, 2), day.AddDate(0, 0, 3)}
	a1 := domain.Spend{Calls: 2, InputTokens: 1050, OutputTokens: 205, Money: domain.USD(0.006), UnpricedTokens: 55}
	a2 := domain.Spend{Calls: 1, InputTokens: 10, OutputTokens: 1, Money: domain.USD(0.00005)}
	a3 := domain.Spend{Calls: 1, InputTokens: 100, OutputTokens: 10, Money: domain.USD(0.0005)}
	plus := func(a, b domain.Spend) domain.Spend {
		return domain.Spend{Calls: a.Calls + b.Calls, InputTokens: a.InputTokens + b.InputTokens, OutputTokens: a.OutputTokens + b.OutputTokens,
			Money: a.Money + b.Money, UnpricedTokens: a.UnpricedTokens + b.UnpricedTokens}
	}
	tests := []struct {
		name string
		q    store.SeriesQuery
		want []store.SeriesPoint
	}{
		{"by worker", store.SeriesQuery{Edges: edges, By: store.SpendByWorker},
			[]store.SeriesPoint{{Bucket: 0, Key: "w-bot", Spend: plus(a1, a2)}, {Bucket: 2, Key: "w-bot", Spend: a3}}},
		{"by stream: a run on two streams counts in each", store.SeriesQuery{Edges: edges, By: store.SpendByStream},
			[]store.SeriesPoint{{Bucket: 0, Key: "s-a", Spend: plus(a1, a2)}, {Bucket: 0, Key: "s-b", Spend: a1}, {Bucket: 2, Key: "s-b", Spend: a3}}},
		{"by model", store.SeriesQuery{Edges: edges, By: store.SpendByModel},
			[]store.SeriesPoint{{Bucket: 0, Key: "m-free", Spend: domain.Spend{Calls: 1, InputTokens: 50, OutputTokens: 5, UnpricedTokens: 55}},
				{Bucket: 0, Key: "m-priced", Spend: domain.Spend{Calls: 2, InputTokens: 1010, OutputTokens: 201, Money: domain.USD(0.00605)}},
				{Bucket: 2, Key: "m-priced", Spend: a3}}},
		{"hours: each call in its own hour", store.SeriesQuery{Edges: []time.Time{day.Add(10 * time.Hour), day.Add(11 * time.Hour), day.Add(12 * time.Hour)}, By: store.SpendByWorker},
			[]store.SeriesPoint{{Bucket: 0, Key: "w-bot", Spend: a1}, {Bucket: 1, Key: "w-bot", Spend: a2}}},
		{"other workers only", store.SeriesQuery{Edges: edges, By: store.SpendByWorker, Workers: []string{"w-lead"}}, []store.SeriesPoint{}},
		{"no workers", store.SeriesQuery{Edges: edges, By: store.SpendByWorker, Workers: []string{}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := st.SpendSeries(t.Context(), tt.q)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("series (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSpendSeriesRefuses: an unknown grouping or a period without
// buckets is a clear error, not an empty chart.
func TestSpendSeriesRefuses(t *testing.T) {
	t.Parallel()
	st, day := spendDays(t)
	tests := []struct {
		name string
		q    store.SeriesQuery
		want string
	}{
		{"unknown grouping", store.SeriesQuery{Edges: []time.Time{day, day.Add(time.Hour)}, By: "colour"}, `by: unknown grouping "colour" (valid: "worker", "stream", "model")`},
		{"one edge", store.SeriesQuery{Edges: []time.Time{day}, By: store.SpendByModel}, "edges: need 2 to 401 bucket edges, got 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := st.SpendSeries(t.Context(), tt.q)
			if err == nil || err.Error() != tt.want {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestTopRuns: the period's runs by cost, money first; a period that
// leaves a run out, a limit and a worker filter each narrow the list.
func TestTopRuns(t *testing.T) {
	t.Parallel()
	st, day := spendDays(t)
	ctx := t.Context()
	ids := func(since time.Time, until *time.Time, workers []string, limit int) []string {
		t.Helper()
		runs, err := st.TopRuns(ctx, since, until, workers, limit)
		if err != nil {
			t.Fatal(err)
		}
		out := []string{}
		for _, r := range runs {
			out = append(out, r.ActivationID)
		}
		return out
	}
	next := day.AddDate(0, 0, 1)
	tests := []struct {
		name string
		got  []string
		want []string
	}{
		{"all time", ids(time.Time{}, nil, nil, 10), []string{"a-1", "a-3", "a-2"}},
		{"the first day", ids(day, &next, nil, 10), []string{"a-1", "a-2"}},
		{"the top one", ids(time.Time{}, nil, nil, 1), []string{"a-1"}},
		{"of another worker", ids(time.Time{}, nil, []string{"w-lead"}, 10), []string{}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, tt.got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
	runs, err := st.TopRuns(ctx, time.Time{}, nil, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := store.RunSpend{ActivationID: "a-1", WorkerID: "w-bot", StartedAt: day.Add(10 * time.Hour),
		Spend: domain.Spend{Calls: 2, InputTokens: 1050, OutputTokens: 205, Money: domain.USD(0.006), UnpricedTokens: 55}}
	if diff := cmp.Diff([]store.RunSpend{want}, runs); diff != "" {
		t.Errorf("top run (-want +got):\n%s", diff)
	}
}
