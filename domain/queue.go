package domain

import "time"

// TriggerStatus is where a trigger is in its life.
type TriggerStatus string

const (
	// TriggerPending waits for a run, from NotBefore on when that is set.
	TriggerPending TriggerStatus = "pending"
	// TriggerClaimed is part of a running activation.
	TriggerClaimed TriggerStatus = "claimed"
	// TriggerDone was delivered to an agent that ran.
	TriggerDone TriggerStatus = "done"
	// TriggerParked is held, with a reason, until an operator releases or
	// drops it: nothing runs it on its own again.
	TriggerParked TriggerStatus = "parked"
	// TriggerDropped was closed by an operator without a run.
	TriggerDropped TriggerStatus = "dropped"
)

// QueuedTrigger is a trigger as an operator sees it in the queue: what it
// is for, where it stands, and why it waits.
type QueuedTrigger struct {
	ID           int64         `json:"id"`
	WorkerID     string        `json:"workerId"`
	Kind         TriggerKind   `json:"kind"`
	Status       TriggerStatus `json:"status"`
	EventID      string        `json:"eventId"`
	StreamID     string        `json:"streamId"`
	Attempts     int           `json:"attempts"`
	NotBefore    *time.Time    `json:"notBefore,omitempty"`
	LastError    string        `json:"lastError,omitempty"`
	Reason       string        `json:"reason,omitempty"`
	ActivationID string        `json:"activationId,omitempty"`
	CreatedAt    time.Time     `json:"createdAt"`
}

// AgentProcess identifies an agent running on the host, so that a server
// restarted after a crash can stop what its predecessor left running:
// the process group, and the start time of its leader (clock ticks since
// boot, as in /proc/<pid>/stat) so that a reused pid is never mistaken
// for it. A container has no PGID: containers are found by their labels.
type AgentProcess struct {
	PGID       int    `json:"pgid,omitempty"`
	StartTicks uint64 `json:"startTicks,omitempty"`
	// Runtime names the runtime the agent runs on, for the server's log;
	// Started fills it in from the Run.
	Runtime string `json:"runtime,omitempty"`
}

// Started tells whoever dispatched the run that its agent is running.
// Runtimes call it once the process or container has started; a run that
// ends before then never reached its agent, and its triggers are retried.
func (r Run) Started(p AgentProcess) {
	if p.Runtime == "" {
		p.Runtime = r.Runtime
	}
	if r.OnStart != nil {
		r.OnStart(p)
	}
}
