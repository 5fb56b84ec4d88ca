package store_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

// BenchmarkFinishCitingProvenAdvice times a run's end (FinishActivation)
// when the run cited five insights that earlier runs cited history times
// each: what crediting long-cited advice costs inside the write
// transaction, where every other write waits.
func BenchmarkFinishCitingProvenAdvice(b *testing.B) {
	for _, history := range []int{0, 1_000, 10_000} {
		b.Run(fmt.Sprintf("history=%d", history), func(b *testing.B) {
			ctx := b.Context()
			clock := storetest.NewClock(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC))
			st := storetest.NewWith(b, store.Options{Now: clock.Now})
			if _, err := st.Bootstrap(ctx, nil); err != nil {
				b.Fatal(err)
			}
			const worker = "w-a"
			for _, err := range []error{
				second(st.CreateRole(ctx, store.OwnerWorker, domain.Role{ID: "r-a", Title: "r", Content: "r"})),
				second(st.CreatePosition(ctx, store.OwnerWorker, domain.Position{ID: "p-a", RoleID: "r-a", Title: "p"})),
				second(st.HireWorker(ctx, store.OwnerWorker, domain.Worker{ID: worker, Kind: domain.WorkerAI, PositionID: "p-a", Name: worker}, nil)),
				second(st.CreateStream(ctx, store.OwnerWorker, domain.Stream{ID: "s-a", Name: "a", Transport: domain.Transport{Kind: domain.TransportLocal}})),
				second(st.Subscribe(ctx, store.OwnerWorker, "s-a", worker)),
			} {
				if err != nil {
					b.Fatal(err)
				}
			}
			var ids []string
			for i := range 5 {
				in, err := st.StoreInsight(ctx, store.OwnerWorker, domain.Insight{Type: domain.InsightPattern, Scope: domain.ScopeOrg,
					Trigger: fmt.Sprintf("deploy rollback %d", i), Resolution: fmt.Sprintf("pin the release tag %d", i)}, 0)
				if err != nil {
					b.Fatal(err)
				}
				ids = append(ids, in.ID)
			}
			if err := st.SeedCredit(ctx, ids, history, func(i int) bool { return i%5 != 0 }); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				clock.Advance(time.Minute)
				run := fmt.Sprintf("a-bench-%d", i)
				if _, err := st.Append(ctx, domain.Event{StreamID: "s-a", Source: store.OwnerWorker, Message: domain.Message{Body: "work"}}, store.AppendOptions{}); err != nil {
					b.Fatal(err)
				}
				act, _, _, err := st.Claim(ctx, worker, run, time.Hour)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := st.Recall(ctx, worker, store.RecallQuery{Query: "deploy rollback", Limit: 5, Mode: domain.RankLearned, Activation: run}); err != nil {
					b.Fatal(err)
				}
				if err := st.InsightFeedback(ctx, worker, run, ids, domain.OutcomeUtilized, ""); err != nil {
					b.Fatal(err)
				}
				act.Status = domain.ActivationSucceeded
				if i%5 == 0 {
					act.Status = domain.ActivationFailed
				}
				b.StartTimer()
				if err := st.FinishActivation(ctx, act, domain.Event{StreamID: domain.ActivationStreamPrefix + worker, Message: domain.Message{Body: "exit"}}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
