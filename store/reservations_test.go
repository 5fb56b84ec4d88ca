package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// TestReserveModelCall: what a call may hold against w-bot's daily
// budget of 1,000 tokens and $0.01, step by step on one store: holds add
// up until what is spent and held reaches the limit, then calls are asked
// to retry; a call without max_tokens holds the rest; settling replaces a
// hold by what the call cost; a crashed call's hold lapses after
// store.ReservationTTL; a model without a price is refused while the
// money limit applies.
func TestReserveModelCall(t *testing.T) {
	t.Parallel()
	st, clock := budgetOrg(t)
	ctx := t.Context()
	setBudget(t, st, domain.Budget{Scope: domain.BudgetWorker, Target: "w-bot", Window: domain.BudgetDay,
		Hard: domain.Limit{Tokens: 1000, Money: domain.USD(0.01)}})
	publishOn(t, st, "s-a")
	claim(t, st, "w-bot", "a-1")
	priced := func(tokens int64) store.Reservation {
		return store.Reservation{Model: "m", Tokens: tokens, Money: domain.Money(tokens) * 1000, Priced: true}
	}
	holds := map[string]string{}
	steps := []struct {
		name string
		do   func() error
		want string // "" or what the error says
	}{
		{"a 400-token hold", func() error { return hold(st, holds, "a", priced(400)) }, ""},
		{"another", func() error { return hold(st, holds, "b", priced(400)) }, ""},
		{"a third, with 800 of 1,000 held", func() error { return hold(st, holds, "c", priced(400)) }, ""},
		{"a fourth, with all of it held", func() error { return hold(st, holds, "d", priced(10)) },
			"budget busy: worker w-bot's daily budget of 1,000 tokens and $0.01 is spoken for: 0 tokens spent today (UTC) by the calls of w-bot, and 1,200 tokens and $0.0012 held by 3 model calls in flight. Retry once they finish; what they do not use is freed."},
		{"a settles for 100 tokens, b fails", func() error {
			if _, err := st.RecordUsage(ctx, "a-1", store.Usage{Model: "m", Input: 50, Output: 50, Cost: domain.USD(0.0001), Priced: true, Reservation: holds["a"]}); err != nil {
				return err
			}
			return st.ReleaseModelCall(ctx, holds["b"])
		}, ""},
		{"100 spent and 400 held leave room", func() error { return hold(st, holds, "e", priced(10)) }, ""},
		{"an unpriced model under a money limit", func() error { return hold(st, holds, "f", store.Reservation{Model: "m-new", Tokens: 10}) },
			`model: "m-new" has no price in llm.prices, and worker w-bot's daily budget limits money ($0.01): a call's cost must be known to hold it against the budget. An operator adds the model to llm.prices or sets llm.prices.default`},
		{"a call without max_tokens holds the rest", func() error {
			return hold(st, holds, "g", store.Reservation{Model: "m", Tokens: 5, Priced: true, Unbounded: true})
		}, ""},
		{"so the next waits", func() error { return hold(st, holds, "h", priced(1)) }, "budget busy: "},
		{"until the crashed calls' holds lapse", func() error {
			clock.Advance(store.ReservationTTL)
			return hold(st, holds, "i", priced(1))
		}, ""},
		{"a renewed hold does not lapse", func() error {
			clock.Advance(store.ReservationTTL / 2)
			if err := st.RenewModelCall(ctx, holds["i"]); err != nil {
				return err
			}
			clock.Advance(store.ReservationTTL/2 + 1)
			return hold(st, holds, "j", store.Reservation{Model: "m", Priced: true, Unbounded: true})
		}, ""},
		{"the unbounded one holds what i left", func() error { return hold(st, holds, "k", priced(1)) }, "and 900 tokens and $0.0099 held by 2 model calls in flight"},
	}
	for _, s := range steps {
		err := s.do()
		switch {
		case s.want == "" && err != nil:
			t.Fatalf("%s: %v", s.name, err)
		case s.want != "" && (err == nil || !strings.Contains(err.Error(), s.want)):
			t.Fatalf("%s: %v, want an error saying %q", s.name, err, s.want)
		}
	}
	var busy *domain.BudgetBusyError
	if err := hold(st, holds, "l", priced(1)); !errors.As(err, &busy) || busy.Calls != 2 {
		t.Errorf("a last hold: %v, want busy with 2 calls in flight", err)
	}
}

// hold reserves r for a-1 and keeps the hold's id under name.
func hold(st *store.Store, holds map[string]string, name string, r store.Reservation) error {
	id, err := st.ReserveModelCall(context.Background(), "a-1", r)
	if err == nil && id == "" {
		return errors.New("no hold made under a budget")
	}
	holds[name] = id
	return err
}
