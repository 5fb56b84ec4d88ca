package domain

import (
	"bytes"
	"encoding/json"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Money is an amount of US dollars in nano-dollars (1e-9 USD), so sums
// of many small calls stay exact and comparisons against a limit never
// round.
type Money int64

// nanosPerUSD is how many Money units make a dollar.
const nanosPerUSD = 1_000_000_000

// USD converts dollars to Money, rounding to the nearest nano-dollar.
func USD(dollars float64) Money { return Money(math.Round(dollars * nanosPerUSD)) }

// Dollars is m as a float, for JSON and display.
func (m Money) Dollars() float64 { return float64(m) / nanosPerUSD }

// String renders m as dollars with as many decimals as it needs (at least
// two): $12.50, $0.0024.
func (m Money) String() string {
	s := strconv.FormatFloat(m.Dollars(), 'f', 9, 64)
	s = strings.TrimRight(s, "0")
	if i := strings.IndexByte(s, '.'); len(s)-i < 3 {
		s += strings.Repeat("0", 3-(len(s)-i))
	}
	return "$" + s
}

// Price is what a model costs, in US dollars per million tokens.
type Price struct {
	Input  float64 `json:"input"`
	Output float64 `json:"output"`
}

// Prices is the llm.prices table: model name → price. A name matches a
// model of that exact name, or one that begins with it and a hyphen (a
// dated version, such as claude-sonnet-4-5-20250929 for
// claude-sonnet-4-5); the longest match wins.
type Prices map[string]Price

// ParsePrices reads the llm.prices JSON, refusing unknown fields and
// negative prices with an error naming the model and the field.
func ParsePrices(raw string) (Prices, error) {
	if strings.TrimSpace(raw) == "" {
		return Prices{}, nil
	}
	var p Prices
	dec := json.NewDecoder(bytes.NewReader([]byte(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, Invalid("llm.prices", `want {"<model>": {"input": <USD per million input tokens>, "output": <USD per million output tokens>}, …}: %v`, err)
	}
	for model, price := range p {
		if strings.TrimSpace(model) == "" {
			return nil, Invalid("llm.prices", "a model name is empty")
		}
		if price.Input < 0 || price.Output < 0 || math.IsNaN(price.Input+price.Output) {
			return nil, Invalid("llm.prices", "%s: prices must be zero or more US dollars per million tokens", model)
		}
	}
	return p, nil
}

// Cost is what a call of model cost, and whether the table priced it.
// Cache reads and writes come in as input tokens and are priced as input.
func (p Prices) Cost(model string, in, out int64) (Money, bool) {
	best, ok := "", false
	for name := range p {
		if (model == name || strings.HasPrefix(model, name+"-")) && len(name) >= len(best) {
			best, ok = name, true
		}
	}
	if !ok {
		return 0, false
	}
	price := p[best]
	// USD per million tokens is 1,000 nano-dollars per token.
	return Money(math.Round(float64(in)*price.Input*1000 + float64(out)*price.Output*1000)), true
}

// Models lists the table's model names, sorted.
func (p Prices) Models() []string {
	out := make([]string, 0, len(p))
	for m := range p {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}

// ParsePrice reads one price, as llm.prices.default takes it; empty is no
// price.
func ParsePrice(raw string) (*Price, error) {
	if strings.TrimSpace(raw) == "" {
		return nil, nil
	}
	var p Price
	dec := json.NewDecoder(bytes.NewReader([]byte(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, Invalid("llm.prices.default", `want {"input": <USD per million input tokens>, "output": <USD per million output tokens>}: %v`, err)
	}
	if p.Input < 0 || p.Output < 0 || math.IsNaN(p.Input+p.Output) {
		return nil, Invalid("llm.prices.default", "prices must be zero or more US dollars per million tokens")
	}
	return &p, nil
}

// CostOr is Cost with def pricing a model the table does not list; a nil
// def leaves it unpriced.
func (p Prices) CostOr(def *Price, model string, in, out int64) (Money, bool) {
	if cost, ok := p.Cost(model, in, out); ok || def == nil {
		return cost, ok
	}
	return Prices{model: *def}.Cost(model, in, out)
}

// PricesSetting is the price table the relay prices calls with. Read on
// every call, so a `config set` applies to the next one; each call keeps
// the price it was charged at.
var PricesSetting = SettingSpec{Key: "llm.prices", Type: SettingJSON, Default: "{}", Validate: func(v string) error { _, err := ParsePrices(v); return err },
	Description: `Model prices for budgets and helix-org spend, in USD per million tokens: {"claude-sonnet-4-5": {"input": 3, "output": 15}}. A name also matches its dated versions (name-…). Calls to a model not listed count tokens but no money, and are refused while a money budget covers the caller, unless llm.prices.default prices them.`}

// DefaultPriceSetting prices every model llm.prices does not list: with it
// a money budget holds whatever model an agent names.
var DefaultPriceSetting = SettingSpec{Key: "llm.prices.default", Type: SettingJSON, Validate: func(v string) error { _, err := ParsePrice(v); return err },
	Description: `The price of a model llm.prices does not list, in USD per million tokens: {"input": 15, "output": 75}. Empty (the default): such a model costs no money, and a call of it is refused while a money budget covers the caller.`}
