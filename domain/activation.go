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
	Event        Event       `json:"event"`
}

// ActivationStatus is where an activation is in its life.
type ActivationStatus string

const (
	ActivationRunning     ActivationStatus = "running"
	ActivationSucceeded   ActivationStatus = "succeeded"
	ActivationFailed      ActivationStatus = "failed"
	ActivationInterrupted ActivationStatus = "interrupted"
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
// acts on the org only through MCPURL with Token.
type Run struct {
	ActivationID string
	WorkerID     string
	// EnvDir holds role.md, identity.md, agent.md and mcp.json.
	EnvDir  string
	MCPURL  string
	Token   string
	Prompt  string
	Timeout time.Duration
	// Log records one entry on the activation stream.
	Log func(LogEntry)
}

// RunResult is how a run ended.
type RunResult struct {
	ExitStatus   int
	InputTokens  int64
	OutputTokens int64
}

// Runtime carries out activations. Runtimes live in package agent.
type Runtime interface {
	Run(ctx context.Context, run Run) (RunResult, error)
}
