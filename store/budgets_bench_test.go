package store_test

import (
	"testing"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

// BenchmarkRecordUsage times what the relay adds to each model call: the
// ledger row alone, and with a worker, a stream and an org budget to
// charge (a day's window over a ledger that grows with the benchmark).
func BenchmarkRecordUsage(b *testing.B) {
	for _, withBudgets := range []bool{false, true} {
		name := "no-budgets"
		if withBudgets {
			name = "worker+stream+org-budgets"
		}
		b.Run(name, func(b *testing.B) {
			st := storetest.New(b)
			ctx := b.Context()
			if _, err := st.Bootstrap(ctx, nil); err != nil {
				b.Fatal(err)
			}
			st.CreateRole(ctx, "w-owner", domain.Role{ID: "r-a", Title: "A", Content: "a"})
			st.CreatePosition(ctx, "w-owner", domain.Position{ID: "p-a", RoleID: "r-a", Title: "A"})
			st.CreateStream(ctx, "w-owner", domain.Stream{ID: "s-a", Name: "a", Transport: domain.Transport{Kind: domain.TransportLocal}})
			st.HireWorker(ctx, "w-owner", domain.Worker{ID: "w-bot", Kind: domain.WorkerAI, PositionID: "p-a", Name: "bot"}, nil)
			st.Subscribe(ctx, "", "s-a", "w-bot")
			st.Append(ctx, domain.Event{StreamID: "s-a", Source: "w-owner", Message: domain.Message{Body: "go"}}, store.AppendOptions{})
			if _, _, _, err := st.Claim(ctx, "w-bot", "a-1", 1e12); err != nil {
				b.Fatal(err)
			}
			if withBudgets {
				huge := domain.Limit{Tokens: 1 << 60}
				for _, bg := range []domain.Budget{{Scope: domain.BudgetWorker, Target: "w-bot", Window: domain.BudgetDay, Hard: huge},
					{Scope: domain.BudgetStream, Target: "s-a", Window: domain.BudgetDay, Hard: huge}, {Scope: domain.BudgetOrg, Window: domain.BudgetMonth, Hard: huge}} {
					if _, err := st.SetBudget(ctx, "w-owner", bg); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ResetTimer()
			for b.Loop() {
				if _, err := st.RecordUsage(ctx, "a-1", store.Usage{Model: "m", Input: 300, Output: 100}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
