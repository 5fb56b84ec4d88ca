package docker_test

import (
	"testing"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/domain"
)

// BenchmarkActivation compares one trivial activation (the agent exits at
// once) in a container with the same as a host process: the difference is
// the container runtime's start overhead (create, attach, start, wait,
// inspect, remove).
func BenchmarkActivation(b *testing.B) {
	runtimes := []struct {
		name string
		rt   domain.Runtime
	}{
		{"command", &agent.Command{Line: "true"}},
		{"docker", newRuntime(shared.eng, shared.image)},
	}
	for _, r := range runtimes {
		b.Run(r.name, func(b *testing.B) {
			run := domain.Run{ActivationID: "a-bench", WorkerID: "w-bench", EnvDir: b.TempDir(), Token: "hxo_bench", Log: func(domain.LogEntry) {}}
			for b.Loop() {
				res, err := r.rt.Run(b.Context(), run)
				if err != nil || res.ExitStatus != 0 {
					b.Fatalf("run: %+v %v", res, err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/activation")
		})
	}
}
