package kubernetes

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/domain"
)

// drainWait bounds how long a pod's log may trail its Job's end.
const drainWait = 5 * time.Second

// logFollower streams the agent's output from its pod to the activation log.
type logFollower struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// followLogs waits for the run's pod to run, then reads its log lines as
// the agent writes them, each parsed as the built-in agent's stream-json
// (agent.LogLine) into the run's log and res.
func (r *Runtime) followLogs(ctx context.Context, run domain.Run, res *domain.RunResult) logFollower {
	ctx, cancel := context.WithCancel(ctx)
	f := logFollower{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(f.done)
		pod, err := r.runningPod(ctx, JobName(run.ActivationID))
		if err != nil || pod == "" {
			return
		}
		stream, err := r.Client.podLog(ctx, r.Namespace, pod, "agent")
		if err != nil {
			if ctx.Err() == nil {
				run.Log(domain.LogEntry{Kind: domain.LogNote, Text: fmt.Sprintf("the log of pod %s cannot be read: %v", pod, err)})
			}
			return
		}
		defer stream.Close()
		sc := bufio.NewScanner(stream)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			agent.LogLine(sc.Text(), run.Log, res)
		}
	}()
	return f
}

// wait lets the log end on its own, but not for long; stop ends it now.
func (f logFollower) wait() {
	select {
	case <-f.done:
	case <-time.After(drainWait):
	}
	f.stop()
}

func (f logFollower) stop() {
	f.cancel()
	<-f.done
}

// runningPod is the name of the Job's pod once it runs (or has run):
// its log exists from then on. Empty when ctx ends first.
func (r *Runtime) runningPod(ctx context.Context, job string) (string, error) {
	sel := "job-name=" + job
	list, err := r.Client.listPods(ctx, r.Namespace, sel)
	if err != nil {
		return "", err
	}
	for _, p := range list.Items {
		if started(&p) {
			return p.Metadata.Name, nil
		}
	}
	w, err := r.Client.watchPods(ctx, r.Namespace, sel, list.Metadata.ResourceVersion)
	if err != nil {
		return "", err
	}
	defer w.stop()
	for {
		ev, err := w.next()
		if err != nil || ev.Type == eventError {
			return "", ctx.Err()
		}
		p := &pod{}
		if ev.Type != eventDeleted && json.Unmarshal(ev.Object, p) == nil && started(p) {
			return p.Metadata.Name, nil
		}
	}
}

func started(p *pod) bool {
	return p.Status.Phase == podRunning || p.Status.Phase == podSucceeded || p.Status.Phase == podFailed
}
