package kubernetes_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/helixml/helix-org/agent/kubernetes/kubetest"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// agentOutput is what the built-in agent prints in a run, as stream-json,
// and one plain line, and what the activation log shows of it (subject,
// body), in order, ending with the run's exit.
var agentOutput = []string{
	`{"type":"system","subtype":"init","session_id":"sess-k8s"}`,
	`{"type":"assistant","message":{"content":[{"type":"text","text":"Reading the stream first."}]}}`,
	`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"call-1","name":"read_events","input":{"stream":"s-k0"}}]}}`,
	`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"call-1","content":"1 event: hello"}]}}`,
	`plain stderr from the pod`,
	`{"type":"assistant","message":{"content":[{"type":"text","text":"Done: said hello back."}]}}`,
	`{"type":"result","subtype":"success","usage":{"input_tokens":120,"output_tokens":30}}`,
}

var wantLog = [][2]string{
	{"assistant", "Reading the stream first."},
	{"tool_call", `{"stream":"s-k0"}`},
	{"tool_result", "1 event: hello"},
	{"output", "plain stderr from the pod"},
	{"assistant", "Done: said hello back."},
	{"exit", "succeeded\nsession: sess-k8s (new)"}, // the init line's session
}

// TestJobLogReachesTheActivationLog: what a run's pod prints, read
// through the apiserver's pods/log from the node's kubelet, is the
// activation log, in order, with the run's tokens — whether the pod has
// exited before the log is read or is still running and streaming.
func TestJobLogReachesTheActivationLog(t *testing.T) {
	c := kubetest.Shared(t)
	tests := []struct {
		name string
		hold bool
	}{
		{name: "exited", hold: false},
		{name: "streaming", hold: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := c.Namespace(t, "logs-"+tt.name)
			st := org(t, 1)
			release := make(chan struct{})
			c.Simulate(t, ns, func(*corev1.Pod) kubetest.Life {
				return kubetest.Life{Hold: tt.hold, Release: release, Log: agentOutput}
			})
			// The message is stored before the dispatcher starts, so the
			// hire's trigger and the message's are one run however busy
			// the machine is.
			publish(t, st, "s-k0", "hello")
			dispatcher(t, st, runtime(t, c, ns))
			if tt.hold {
				// The lines arrive while the pod still runs: it exits
				// only once the last of them is in the log.
				until(t, time.Minute, "the running pod's lines in the activation log", func() bool {
					return len(activationLog(t, st)) >= len(wantLog)-1 // all but the exit
				})
			}
			close(release)
			acts := drained(t, st)
			if len(acts) != 1 || acts[0].Status != domain.ActivationSucceeded {
				t.Fatalf("activations %+v, want one succeeded", acts)
			}
			if got := activationLog(t, st); !slices.Equal(got, wantLog) {
				t.Errorf("activation log:\n%q\nwant:\n%q", got, wantLog)
			}
			if a := acts[0]; a.InputTokens != 120 || a.OutputTokens != 30 {
				t.Errorf("activation tokens in %d out %d, want 120 and 30 from the pod's result line", a.InputTokens, a.OutputTokens)
			}
		})
	}
}

// activationLog is w-k0's activation log, but for its start line (the
// activation's id) and the runtime's notes.
func activationLog(t *testing.T, st *store.Store) [][2]string {
	t.Helper()
	evs, err := st.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{domain.ActivationStreamPrefix + "w-k0"}})
	if err != nil {
		t.Fatal(err)
	}
	var out [][2]string
	for _, ev := range evs {
		if strings.Contains(ev.Message.Body, "cannot be read") {
			t.Errorf("the activation log says %q", ev.Message.Body)
		}
		if ev.Message.Subject != string(domain.LogNote) && ev.Message.Subject != string(domain.LogStart) {
			out = append(out, [2]string{ev.Message.Subject, ev.Message.Body})
		}
	}
	return out
}
