package domain

import (
	"context"
	"time"
)

// TriggerKind says why a worker is being woken.
type TriggerKind string

const (
	TriggerEvent TriggerKind = "event"
	TriggerHire  TriggerKind = "hire"
)

// Trigger is one reason to wake one AI worker: an event landed on a stream
// it follows, or it was just hired. Triggers are written in the same
// transaction as their event, so none is lost between commit and dispatch.
type Trigger struct {
	ID           int64       `json:"id"`
	WorkerID     string      `json:"workerId"`
	Kind         TriggerKind `json:"kind"`
	ActivationID string      `json:"activationId,omitempty"`
	// Attempts counts runs of this trigger whose agent never started.
	Attempts int   `json:"attempts,omitempty"`
	Event    Event `json:"event"`
}

// ActivationStatus is where an activation is in its life.
type ActivationStatus string

const (
	ActivationRunning     ActivationStatus = "running"
	ActivationSucceeded   ActivationStatus = "succeeded"
	ActivationFailed      ActivationStatus = "failed"
	ActivationInterrupted ActivationStatus = "interrupted"
	// ActivationCancelled was stopped by an operator or a manager.
	ActivationCancelled ActivationStatus = "cancelled"
)

// Activation is one one-shot agent run for a worker over a batch of triggers.
type Activation struct {
	ID           string           `json:"id"`
	WorkerID     string           `json:"workerId"`
	TriggerIDs   []int64          `json:"triggerIds"`
	Status       ActivationStatus `json:"status"`
	StartedAt    time.Time        `json:"startedAt"`
	FinishedAt   *time.Time       `json:"finishedAt,omitempty"`
	ExitStatus   *int             `json:"exitStatus,omitempty"`
	Error        string           `json:"error,omitempty"`
	Duration     time.Duration    `json:"durationNs,omitempty"`
	InputTokens  int64            `json:"inputTokens,omitempty"`
	OutputTokens int64            `json:"outputTokens,omitempty"`
	// Cost is what the run's relayed model calls (llm.prices) and outside tool calls (mcp.prices) cost.
	Cost Money `json:"costNanoUsd,omitempty"`
	// Label is the join of everything the run has read: its triggers at
	// first, raised by every labelled result it receives. What it writes
	// carries it on.
	Label Label `json:"label,omitzero"`
	// Tainted and TaintReason say the same as Label's integrity, for
	// readers that predate labels: high-risk tools wait for approval in a
	// tainted run.
	Tainted     bool   `json:"tainted,omitempty"`
	TaintReason string `json:"taintReason,omitempty"`
	// Process is the host process the agent ran as, once it started.
	Process *AgentProcess `json:"process,omitempty"`
	// LeaseUntil is when a running activation counts as dead unless the
	// server renews its lease, which it does while the agent lives.
	LeaseUntil *time.Time `json:"leaseUntil,omitempty"`
}

// ModelCall is one model call an activation made through the server's
// relay, with what it cost as the provider reported it.
type ModelCall struct {
	ActivationID string `json:"activationId"`
	WorkerID     string `json:"workerId"`
	Model        string `json:"model"`
	InputTokens  int64  `json:"inputTokens"`
	OutputTokens int64  `json:"outputTokens"`
	// Cost is from llm.prices at the time of the call; Priced is false
	// when the table did not list the model.
	Cost   Money     `json:"costNanoUsd"`
	Priced bool      `json:"priced"`
	At     time.Time `json:"at"`
}

// LogKind classifies an activation-log entry.
type LogKind string

const (
	LogStart      LogKind = "start"
	LogExit       LogKind = "exit"
	LogAssistant  LogKind = "assistant"
	LogToolCall   LogKind = "tool_call"
	LogToolResult LogKind = "tool_result"
	LogOutput     LogKind = "output"
	LogGuard      LogKind = "guard"
	LogError      LogKind = "error"
	LogRetry      LogKind = "retry"
	LogParked     LogKind = "parked"
	LogOperator   LogKind = "operator"
	// LogNote is the server telling the log something about a run, such as
	// a role asking for a capability only config can give.
	LogNote LogKind = "note"
)

// LogEntry is one line of an activation's log, published on the worker's
// activation stream.
type LogEntry struct {
	Kind LogKind
	Text string
	// Tool names the tool for tool calls and results.
	Tool string
}

// Run is everything a runtime needs to carry out one activation. A runtime
// acts on the org only through MCPURL with Token, and calls models only
// through the server's relay at RelayURL(BaseURL, …) with the same Token.
type Run struct {
	ActivationID string
	WorkerID     string
	// EnvDir holds role.md, identity.md, agent.md and mcp.json.
	EnvDir string
	// BaseURL is the server as the agent reaches it, e.g. http://127.0.0.1:8080.
	BaseURL string
	MCPURL  string
	Token   string
	Prompt  string
	Timeout time.Duration
	// Log records one entry on the activation stream.
	Log func(LogEntry)
	// OnStart is called, through Started, once the agent is running.
	OnStart func(AgentProcess)
	// Runtime names the runtime chosen for the run (agent.Selector sets it).
	Runtime string
	// Session, when set, is the runtime's own session id to resume (its
	// CLI's resume option); empty starts a fresh session.
	Session string
	// History, with Session, is the built-in agent's conversation to
	// continue (AgentSession.History); KeepHistory asks it to hand back
	// the conversation as the run leaves it, in RunResult.History.
	History     []byte
	KeepHistory bool
	// Steer, when set, takes the messages sent to the run since it last
	// asked (message_activation), raising its label by theirs: a runtime
	// whose agent takes input while it runs (Claude Code's stream-json)
	// hands them on. Taking them is final, so each reaches one agent once.
	Steer func(ctx context.Context) ([]SteerMessage, error)
}

// RunResult is how a run ended.
type RunResult struct {
	// Runtime names the runtime that ran it, or was chosen and could not start.
	Runtime    string
	ExitStatus int
	// Killed says the agent was killed from outside the runtime (kill -9,
	// the OOM killer, docker kill), not stopped by it: its triggers run
	// again.
	Killed       bool
	InputTokens  int64
	OutputTokens int64
	// Session is the runtime's own id of the session the run had, as its
	// CLI reported it, for the next run to resume; empty when it said none.
	Session string
	// History is the built-in agent's conversation at the end of the run,
	// when Run.KeepHistory asked for it.
	History []byte
	// Continued says the run resumed the session it was given.
	Continued bool
	// Stop, for a run the server stopped (a cancel, a timeout, shutdown),
	// says how its agent ended: "stopped" on SIGTERM, or "killed" when it
	// outlived the grace after it.
	Stop string
}

// Runtime carries out activations. Runtimes live in package agent.
type Runtime interface {
	Run(ctx context.Context, run Run) (RunResult, error)
}
