package dispatch

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// requeue hands back the triggers of a run whose agent never started — a
// binary or image missing, runtime config missing, the environment not
// written: nothing reached an agent, so nothing is closed. They wait with
// exponential backoff, and those that have failed to start
// dispatch.max_start_attempts times are parked until an operator releases
// or drops them. act comes marked failed by failedStart.
func (d *Dispatcher) requeue(ctx context.Context, act domain.Activation, trigs []domain.Trigger, runErr error) {
	limit := max(1, int(d.st.IntSetting(ctx, MaxStartAttemptsSetting)))
	var park, retry []int64
	attempts := 0 // of the oldest trigger that retries: the worker's backoff
	for _, t := range trigs {
		if n := t.Attempts + 1; n >= limit {
			park = append(park, t.ID)
		} else {
			retry = append(retry, t.ID)
			attempts = max(attempts, n)
		}
	}
	due := d.st.Now().Add(backoff(d.st.DurationSetting(ctx, StartBackoffSetting), d.st.DurationSetting(ctx, StartBackoffMaxSetting), attempts))
	w := act.WorkerID
	logs := []domain.Event{logEvent(w, act.ID, domain.LogEntry{Kind: domain.LogExit, Text: exitText(act)})}
	if len(retry) > 0 {
		logs = append(logs, logEvent(w, act.ID, domain.LogEntry{Kind: domain.LogRetry, Text: fmt.Sprintf(
			"the agent did not start (attempt %d of %d); trigger(s) %s wait until %s, with what arrives meanwhile",
			attempts, limit, idList(retry), due.Format(time.RFC3339))}))
	}
	reason := ""
	if len(park) > 0 {
		reason = fmt.Sprintf("the agent failed to start %d time(s): %s", limit, runErr)
		logs = append(logs, logEvent(w, act.ID, domain.LogEntry{Kind: domain.LogParked, Text: fmt.Sprintf(
			"trigger(s) %s parked: %s. Fix the runtime, then `helix-org triggers release --worker %s` runs them (or `helix-org triggers drop` closes them)",
			idList(park), reason, w)}))
	}
	rq := store.Requeue{Error: runErr.Error(), NotBefore: due, Park: park, ParkReason: reason}
	if err := d.st.RequeueActivation(ctx, act, rq, logs...); err != nil {
		d.log.Error("requeue triggers of an agent that did not start", "activation", act.ID, "err", err)
		return
	}
	if len(park) > 0 {
		d.log.Warn("parked triggers: the agent did not start", "worker", w, "activation", act.ID, "triggers", park, "attempts", limit, "err", runErr)
	}
	if len(retry) > 0 {
		d.log.Warn("the agent did not start; its triggers will be retried", "worker", w, "activation", act.ID, "attempt", attempts, "retry_at", due, "err", runErr)
	}
}

// failedStart marks the activation of an agent that never started, and
// returns the reason.
func failedStart(act domain.Activation, runErr error) (domain.Activation, error) {
	if runErr == nil {
		runErr = errors.New("the runtime returned without starting the agent")
	}
	act.Status, act.Error = domain.ActivationFailed, "did not start: "+runErr.Error()
	return act, runErr
}

// backoff is the wait after the attempt-th failed start: base, doubling
// with each attempt, never over ceiling.
func backoff(base, ceiling time.Duration, attempt int) time.Duration {
	d := base
	for i := 1; i < attempt && d < ceiling; i++ {
		d *= 2
	}
	if ceiling > 0 && d > ceiling {
		d = ceiling
	}
	return max(d, 0)
}

func idList(ids []int64) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = fmt.Sprint(id)
	}
	return strings.Join(s, ", ")
}
