package domain_test

import (
	"strings"
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
)

func TestPrices(t *testing.T) {
	p, err := domain.ParsePrices(`{"claude-sonnet-4-5": {"input": 3, "output": 15}, "claude-sonnet-4-5-20250929": {"input": 2, "output": 10}, "claude": {"input": 1, "output": 1}}`)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		model  string
		in     int64
		out    int64
		want   domain.Money
		priced bool
	}{
		{"claude-sonnet-4-5", 1_000_000, 1_000_000, domain.USD(18), true},
		{"claude-sonnet-4-5-20250929", 1_000_000, 0, domain.USD(2), true}, // the longer name wins
		{"claude-sonnet-4-5-20990101", 300, 100, domain.USD(0.0024), true},
		{"claude-haiku", 1_000_000, 0, domain.USD(1), true}, // "claude" + "-"
		{"claudette", 10, 10, 0, false},
		{"gpt-4o", 10, 10, 0, false},
	}
	for _, tt := range tests {
		got, priced := p.Cost(tt.model, tt.in, tt.out)
		if got != tt.want || priced != tt.priced {
			t.Errorf("Cost(%s, %d, %d) = %s, %v; want %s, %v", tt.model, tt.in, tt.out, got, priced, tt.want, tt.priced)
		}
	}
	for _, bad := range []struct{ raw, want string }{
		{`{"m": {"input": 1, "ouput": 2}}`, `llm.prices: want {"<model>": {"input": <USD per million input tokens>, "output": <USD per million output tokens>}, …}: json: unknown field "ouput"`},
		{`{"m": {"input": -1, "output": 2}}`, "llm.prices: m: prices must be zero or more US dollars per million tokens"},
		{`{"m": {"input": "3"}}`, "llm.prices: want"},
		{`{"": {"input": 1}}`, "llm.prices: a model name is empty"},
	} {
		if err := domain.PricesSetting.Check(bad.raw); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("Check(%s) = %v, want %q", bad.raw, err, bad.want)
		}
	}
}

func TestMoneyAndThousands(t *testing.T) {
	for m, want := range map[domain.Money]string{0: "$0.00", domain.USD(12.5): "$12.50", domain.USD(0.0024): "$0.0024", domain.USD(1000): "$1000.00", 1: "$0.000000001"} {
		if got := m.String(); got != want {
			t.Errorf("Money(%d) = %s, want %s", int64(m), got, want)
		}
	}
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -1200: "-1,200"} {
		if got := domain.Thousands(n); got != want {
			t.Errorf("Thousands(%d) = %s, want %s", n, got, want)
		}
	}
}

func TestBudgetWindows(t *testing.T) {
	at := time.Date(2026, 12, 31, 23, 59, 0, 0, time.FixedZone("X", 3600*5)) // 18:59 UTC
	tests := []struct {
		w          domain.BudgetWindow
		start, end string
		key        string
	}{
		{domain.BudgetDay, "2026-12-31T00:00:00Z", "2027-01-01T00:00:00Z", "2026-12-31"},
		{domain.BudgetMonth, "2026-12-01T00:00:00Z", "2027-01-01T00:00:00Z", "2026-12"},
		{domain.BudgetTotal, "0001-01-01T00:00:00Z", "", "total"},
	}
	for _, tt := range tests {
		end := ""
		if e := tt.w.End(at); e != nil {
			end = e.Format(time.RFC3339)
		}
		if got := tt.w.Start(at).Format(time.RFC3339); got != tt.start || end != tt.end || tt.w.Key(at) != tt.key {
			t.Errorf("%s: start %s end %q key %s; want %s %q %s", tt.w, got, end, tt.w.Key(at), tt.start, tt.end, tt.key)
		}
	}
}

func TestBudgetStates(t *testing.T) {
	b := domain.Budget{Hard: domain.Limit{Tokens: 1000, Money: domain.USD(1)}, Soft: domain.Limit{Tokens: 800}}
	for _, tt := range []struct {
		spend domain.Spend
		want  domain.BudgetState
	}{
		{domain.Spend{InputTokens: 799}, domain.BudgetOK},
		{domain.Spend{InputTokens: 700, OutputTokens: 100}, domain.BudgetSoft},
		{domain.Spend{InputTokens: 900, OutputTokens: 100}, domain.BudgetExceeded},      // at the limit is over it
		{domain.Spend{InputTokens: 1, Money: domain.USD(1)}, domain.BudgetExceeded},     // either measure
		{domain.Spend{InputTokens: 1, Money: domain.USD(0.999999999)}, domain.BudgetOK}, // a nano-dollar short
	} {
		if got := b.StateOf(tt.spend); got != tt.want {
			t.Errorf("StateOf(%+v) = %s, want %s", tt.spend, got, tt.want)
		}
	}
}
