package dispatch_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/dispatch"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

// timed wraps a runtime and reports when each run starts and ends.
type timed struct {
	inner         domain.Runtime
	started, done chan time.Time
}

func (s *timed) Run(ctx context.Context, run domain.Run) (domain.RunResult, error) {
	s.started <- time.Now()
	res, err := s.inner.Run(ctx, run)
	s.done <- time.Now()
	return res, err
}

// BenchmarkPublishToActivation measures publish → activation-start latency
// with n subscribed AI workers whose agent is a no-op command, through the
// real Run loop, and the activations per second that sustains.
func BenchmarkPublishToActivation(b *testing.B) {
	for _, n := range []int{1, 10, 100} {
		b.Run(fmt.Sprintf("workers=%d", n), func(b *testing.B) {
			st := storetest.New(b)
			ctx := b.Context()
			st.Bootstrap(ctx, nil)
			st.CreateRole(ctx, "w-owner", domain.Role{ID: "r-b", Title: "B", Content: "noop"})
			st.CreatePosition(ctx, "w-owner", domain.Position{ID: "p-b", RoleID: "r-b", Title: "B"})
			st.CreateStream(ctx, "w-owner", domain.Stream{ID: "s-bench", Name: "bench", Transport: domain.Transport{Kind: domain.TransportLocal}})
			st.SetSetting(ctx, dispatch.MaxConcurrentSetting, fmt.Sprint(n))
			sp := &timed{inner: &agent.Command{Line: "true"}, started: make(chan time.Time, n), done: make(chan time.Time, n)}
			d := dispatch.New(st, sp, dispatch.Options{EnvsDir: b.TempDir(), MCPBaseURL: "http://127.0.0.1:1"})
			runCtx, cancel := context.WithCancel(ctx)
			defer cancel()
			go d.Run(runCtx)
			for i := range n {
				id := fmt.Sprintf("w-b%d", i)
				st.HireWorker(ctx, "w-owner", domain.Worker{ID: id, Kind: domain.WorkerAI, PositionID: "p-b", Name: id}, nil)
				st.Subscribe(ctx, "w-owner", "s-bench", id)
			}
			drain := func() {
				for range n {
					<-sp.started
				}
				for range n {
					<-sp.done
				}
				d.Wait()
			}
			drain() // the hire activations

			var lat []time.Duration
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				if _, err := st.Append(ctx, domain.Event{StreamID: "s-bench", Message: domain.Message{Body: "tick"}}, store.AppendOptions{}); err != nil {
					b.Fatal(err)
				}
				for range n {
					lat = append(lat, (<-sp.started).Sub(t0))
				}
				for range n {
					<-sp.done
				}
				d.Wait()
			}
			elapsed := time.Since(start)
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(ms(lat[len(lat)/2]), "p50_ms")
			b.ReportMetric(ms(lat[len(lat)*99/100]), "p99_ms")
			b.ReportMetric(float64(n*b.N)/elapsed.Seconds(), "activations/s")
		})
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
