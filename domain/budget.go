package domain

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// BudgetScope is what a budget limits: one worker's model calls, the
// calls of runs triggered by one stream's events, or the whole org's.
type BudgetScope string

const (
	BudgetWorker BudgetScope = "worker"
	BudgetStream BudgetScope = "stream"
	BudgetOrg    BudgetScope = "org"
)

// BudgetScopes lists the valid scopes, in the order shown to users.
var BudgetScopes = []BudgetScope{BudgetWorker, BudgetStream, BudgetOrg}

// Validate rejects unknown scopes, naming the valid ones.
func (sc BudgetScope) Validate(field string) error {
	if !slices.Contains(BudgetScopes, sc) {
		return EnumError(field, "budget scope", sc, BudgetScopes)
	}
	return nil
}

// BudgetWindow is the period a budget's spend is counted over. Windows
// are calendar periods in UTC, so everyone agrees when one ends.
type BudgetWindow string

const (
	BudgetDay   BudgetWindow = "day"
	BudgetMonth BudgetWindow = "month"
	BudgetTotal BudgetWindow = "total"
)

// BudgetWindows lists the valid windows.
var BudgetWindows = []BudgetWindow{BudgetDay, BudgetMonth, BudgetTotal}

// Start is when the window holding t began: midnight UTC, the first of
// the month, or the zero time for total.
func (w BudgetWindow) Start(t time.Time) time.Time {
	t = t.UTC()
	switch w {
	case BudgetDay:
		return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	case BudgetMonth:
		return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
	}
	return time.Time{}
}

// End is when the window holding t ends; nil for total, which never does.
func (w BudgetWindow) End(t time.Time) *time.Time {
	var end time.Time
	switch w {
	case BudgetDay:
		end = w.Start(t).AddDate(0, 0, 1)
	case BudgetMonth:
		end = w.Start(t).AddDate(0, 1, 0)
	default:
		return nil
	}
	return &end
}

// Key names the window holding t ("2026-03-04", "2026-03", "total"): a
// budget's state remembers the window it applies to, so it lapses by
// itself when the next window begins.
func (w BudgetWindow) Key(t time.Time) string {
	switch w {
	case BudgetDay:
		return w.Start(t).Format("2006-01-02")
	case BudgetMonth:
		return w.Start(t).Format("2006-01")
	}
	return string(BudgetTotal)
}

// Adverb is how a message says the window: "today", "this month", "in total".
func (w BudgetWindow) Adverb() string {
	switch w {
	case BudgetDay:
		return "today (UTC)"
	case BudgetMonth:
		return "this month (UTC)"
	}
	return "in total"
}

// Limit is an amount of tokens, money and/or calls to outside tools; zero
// means no limit on that measure.
type Limit struct {
	Tokens int64
	Money  Money
	// Calls counts calls to outside MCP servers' tools (<server>__<tool>).
	Calls int64
}

// IsZero reports whether l limits nothing.
func (l Limit) IsZero() bool { return l.Tokens == 0 && l.Money == 0 && l.Calls == 0 }

// ReachedBy reports whether s has reached l on any measure l limits.
func (l Limit) ReachedBy(s Spend) bool {
	return (l.Tokens > 0 && s.Tokens() >= l.Tokens) || (l.Money > 0 && s.Money >= l.Money) ||
		(l.Calls > 0 && s.OutsideCalls >= l.Calls)
}

func (l Limit) String() string {
	var parts []string
	if l.Tokens > 0 {
		parts = append(parts, fmt.Sprintf("%s tokens", Thousands(l.Tokens)))
	}
	if l.Money > 0 {
		parts = append(parts, l.Money.String())
	}
	if l.Calls > 0 {
		parts = append(parts, fmt.Sprintf("%s outside tool calls", Thousands(l.Calls)))
	}
	return strings.Join(parts, " and ")
}

// DefaultSoftPercent is where the soft threshold sits when set_budget is
// given none: this share of each hard limit.
const DefaultSoftPercent = 80

// Budget limits what one scope may spend on model calls in a window. Hard
// is the stop: at it the relay refuses further calls and no new run starts
// for the scope. Soft is a warning: crossing it sends a notice once per
// window. There is at most one budget per scope, target and window.
type Budget struct {
	Scope BudgetScope
	// Target is the worker or stream id; empty for the org.
	Target    string
	Window    BudgetWindow
	Hard      Limit
	Soft      Limit
	SetBy     string
	UpdatedAt time.Time
}

// Name is how messages refer to a budget: "worker w-echo's daily budget".
func (b Budget) Name() string {
	adj := map[BudgetWindow]string{BudgetDay: "daily", BudgetMonth: "monthly", BudgetTotal: "total"}[b.Window]
	if b.Scope == BudgetOrg {
		return "the org's " + adj + " budget"
	}
	return fmt.Sprintf("%s %s's %s budget", b.Scope, b.Target, adj)
}

// ValidateKey checks what names a budget: its scope, target and window.
func (b Budget) ValidateKey() error {
	if err := b.Scope.Validate("scope"); err != nil {
		return err
	}
	if !slices.Contains(BudgetWindows, b.Window) {
		return EnumError("window", "budget window", b.Window, BudgetWindows)
	}
	switch {
	case b.Scope == BudgetOrg && b.Target != "":
		return Invalid("target", "an org budget has no target; omit it (got %q)", b.Target)
	case b.Scope == BudgetWorker && !strings.HasPrefix(b.Target, PrefixWorker):
		return Invalid("target", "a worker budget needs the worker's id (w-…) as target; got %q", b.Target)
	case b.Scope == BudgetStream && !strings.HasPrefix(b.Target, PrefixStream):
		return Invalid("target", "a stream budget needs the stream's id (s-…) as target; got %q", b.Target)
	}
	return nil
}

// Validate checks a budget before it is stored; errors name the field and
// the valid values.
func (b Budget) Validate() error {
	if err := b.ValidateKey(); err != nil {
		return err
	}
	for _, f := range []struct {
		field string
		neg   bool
	}{{"tokens", b.Hard.Tokens < 0}, {"usd", b.Hard.Money < 0}, {"softTokens", b.Soft.Tokens < 0}, {"softUsd", b.Soft.Money < 0},
		{"calls", b.Hard.Calls < 0}, {"softCalls", b.Soft.Calls < 0}} {
		if f.neg {
			return Invalid(f.field, "must be positive; omit it to leave that measure unlimited")
		}
	}
	if b.Hard.IsZero() {
		return Invalid("tokens", "give a hard limit: tokens, usd, calls (outside tool calls) or any of them together")
	}
	return b.checkSoft()
}

func (b Budget) checkSoft() error {
	switch {
	case b.Soft.Tokens > 0 && b.Hard.Tokens == 0:
		return Invalid("softTokens", "there is no token limit (tokens) for a soft token threshold to warn before")
	case b.Soft.Money > 0 && b.Hard.Money == 0:
		return Invalid("softUsd", "there is no money limit (usd) for a soft money threshold to warn before")
	case b.Soft.Tokens >= b.Hard.Tokens && b.Hard.Tokens > 0:
		return Invalid("softTokens", "the soft threshold (%s) must be below the hard limit tokens (%s)", Thousands(b.Soft.Tokens), Thousands(b.Hard.Tokens))
	case b.Soft.Money >= b.Hard.Money && b.Hard.Money > 0:
		return Invalid("softUsd", "the soft threshold (%s) must be below the hard limit usd (%s)", b.Soft.Money, b.Hard.Money)
	case b.Soft.Calls > 0 && b.Hard.Calls == 0:
		return Invalid("softCalls", "there is no outside call limit (calls) for a soft call threshold to warn before")
	case b.Soft.Calls >= b.Hard.Calls && b.Hard.Calls > 0:
		return Invalid("softCalls", "the soft threshold (%s) must be below the hard limit calls (%s)", Thousands(b.Soft.Calls), Thousands(b.Hard.Calls))
	}
	return nil
}

// Spend is what model calls cost: tokens as providers reported them, and
// money from llm.prices at the time of each call. Calls to a model the
// table did not price count their tokens in UnpricedTokens too, and add no
// money. Calls to outside tools count in OutsideCalls, and add money where
// mcp.prices prices them.
type Spend struct {
	// Calls are model calls; OutsideCalls are calls to outside tools.
	Calls          int64
	OutsideCalls   int64
	InputTokens    int64
	OutputTokens   int64
	Money          Money
	UnpricedTokens int64
	UnpricedModels []string
}

// Tokens is input plus output: what a token limit counts.
func (s Spend) Tokens() int64 { return s.InputTokens + s.OutputTokens }

// BudgetState is where a budget stands in its current window.
type BudgetState string

const (
	BudgetOK       BudgetState = "ok"
	BudgetSoft     BudgetState = "soft"
	BudgetExceeded BudgetState = "exceeded"
)

// BudgetStatus is a budget with its spend in the current window and who
// may raise it.
type BudgetStatus struct {
	Budget
	WindowStart time.Time
	WindowEnd   *time.Time
	Spend       Spend
	State       BudgetState
	// Raisers are who may change the budget and should hear of it: the
	// scope's nearest human manager and the owner.
	Raisers []string
}

// StateOf says where spend s puts b.
func (b Budget) StateOf(s Spend) BudgetState {
	switch {
	case b.Hard.ReachedBy(s):
		return BudgetExceeded
	case !b.Soft.IsZero() && b.Soft.ReachedBy(s):
		return BudgetSoft
	}
	return BudgetOK
}

// BudgetExceededError is a hard budget reached: the relay's answer to a
// model call and the end of the run, in words an agent and its operator
// can act on.
type BudgetExceededError struct{ Status BudgetStatus }

func (e *BudgetExceededError) Error() string {
	s := e.Status
	until := "until the limit is raised"
	if s.WindowEnd != nil {
		until = fmt.Sprintf("until %s, when the window ends, or until the limit is raised", s.WindowEnd.Format(time.RFC3339))
	}
	return fmt.Sprintf("budget exceeded: %s of %s is used up: %s spent %s by %s%s. No more model calls or runs for it %s: %s can raise it with set_budget.",
		s.Name(), s.Hard, s.Spend.Summary(), s.Window.Adverb(), s.Subject(), s.Spend.UnpricedNote(), until, OrList(s.Raisers))
}

// Unwrap lets errors.Is(err, ErrForbidden) match a budget stop.
func (e *BudgetExceededError) Unwrap() error { return ErrForbidden }

// BudgetBusyError is a model call refused because the calls in flight
// hold what is left of a hard budget: each holds its maximum cost until it
// is settled, so parallel calls cannot spend past the limit together. It
// is temporary — what they do not use is freed when they finish — so the
// relay answers it as a rate limit, which client libraries retry.
type BudgetBusyError struct {
	Status BudgetStatus
	// Held is what Calls calls in flight hold.
	Held  Limit
	Calls int64
}

func (e *BudgetBusyError) Error() string {
	s := e.Status
	return fmt.Sprintf("budget busy: %s of %s is spoken for: %s spent %s by %s, and %s held by %d model calls in flight. Retry once they finish; what they do not use is freed.",
		s.Name(), s.Hard, s.Spend.Summary(), s.Window.Adverb(), s.Subject(), e.Held.Amount(), e.Calls)
}

// Amount renders l as spend rather than as a limit: "900 tokens and $0.01"
// with every measure shown, zero included.
func (l Limit) Amount() string {
	out := Thousands(l.Tokens) + " tokens and " + l.Money.String()
	if l.Calls > 0 {
		out += " and " + Thousands(l.Calls) + " outside tool calls"
	}
	return out
}

// Subject is whose calls a budget counts, for messages.
func (b Budget) Subject() string {
	switch b.Scope {
	case BudgetWorker:
		return "the calls of " + b.Target
	case BudgetStream:
		return "runs triggered on " + b.Target
	}
	return "the whole org"
}

// Summary renders spend as "1,200 tokens and $0.0048" (no money when
// nothing was priced).
func (s Spend) Summary() string {
	out := Thousands(s.Tokens()) + " tokens"
	if s.Money > 0 || s.UnpricedTokens < s.Tokens() {
		out += " and " + s.Money.String()
	}
	if s.OutsideCalls > 0 {
		out += fmt.Sprintf(" and %s outside tool calls", Thousands(s.OutsideCalls))
	}
	return out
}

// UnpricedNote is " (… tokens on models not in llm.prices, which cost no
// money: m)", or empty when every call was priced.
func (s Spend) UnpricedNote() string {
	if s.UnpricedTokens == 0 {
		return ""
	}
	return fmt.Sprintf(" (%s tokens on models not in llm.prices, which cost no money: %s)", Thousands(s.UnpricedTokens), strings.Join(s.UnpricedModels, ", "))
}

// Thousands renders n with comma separators: 1,200.
func Thousands(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

// OrList joins names for a sentence: "a", "a or b", "a, b or c".
func OrList(names []string) string {
	switch len(names) {
	case 0:
		return OwnerWorker
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
