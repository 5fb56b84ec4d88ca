package agent_test

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/domain"
)

// alive reports whether pid runs (a zombie is dead).
func alive(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	for i := len(data) - 1; i >= 0; i-- {
		if data[i] == ')' {
			return i+2 < len(data) && data[i+2] != 'Z' && data[i+2] != 'X'
		}
	}
	return false
}

// TestStopOrphans starts an agent whose shell has a child, as a crashed
// server would have left it, and checks that StopOrphans kills the whole
// group only when the record is really that agent's.
func TestStopOrphans(t *testing.T) {
	tests := []struct {
		name     string
		identity func(started domain.AgentProcess) domain.AgentProcess
		activ    string
		killed   bool
	}{
		{"recorded start time matches", func(p domain.AgentProcess) domain.AgentProcess { return p }, "a-1", true},
		{"pid reused: start time differs", func(p domain.AgentProcess) domain.AgentProcess { p.StartTicks++; return p }, "a-1", false},
		{"no start time: the environment names the activation", func(p domain.AgentProcess) domain.AgentProcess { p.StartTicks = 0; return p }, "a-1", true},
		{"no start time: another activation's", func(p domain.AgentProcess) domain.AgentProcess { p.StartTicks = 0; return p }, "a-other", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var log logSink
			run := newRun(t, &log)
			started := make(chan domain.AgentProcess, 1)
			child := make(chan int, 1)
			run.OnStart = func(p domain.AgentProcess) { started <- p }
			run.Log = func(e domain.LogEntry) {
				if pid, err := strconv.Atoi(e.Text); err == nil {
					child <- pid
				}
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() {
				(&agent.Command{Line: "sleep 600 & echo $!; wait"}).Run(ctx, run)
				close(done)
			}()
			t.Cleanup(func() { cancel(); <-done })
			p, kid := <-started, <-child

			n, err := agent.StopOrphans(t.Context(), []domain.Activation{{ID: tt.activ, Process: ptr(tt.identity(p))}})
			if err != nil {
				t.Fatal(err)
			}
			if got := n == 1; got != tt.killed {
				t.Fatalf("killed %d groups, want killed=%v", n, tt.killed)
			}
			if tt.killed {
				if alive(p.PGID) || alive(kid) {
					t.Errorf("after StopOrphans: leader alive %v, child alive %v", alive(p.PGID), alive(kid))
				}
				select {
				case <-done:
				case <-time.After(10 * time.Second):
					t.Error("the killed agent's run did not end")
				}
			} else if !alive(p.PGID) || !alive(kid) {
				t.Error("StopOrphans killed a group that was not the agent's")
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
