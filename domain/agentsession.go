package domain

import "time"

// AgentSession is the session of an agent CLI (its own id, as its resume
// option takes it) that a worker's next run on that runtime continues,
// when the worker preserves its context. Bytes and Runs count what the
// session has been given, for the size cap.
type AgentSession struct {
	WorkerID  string    `json:"workerId"`
	Runtime   string    `json:"runtime"`
	SessionID string    `json:"sessionId"`
	StartedAt time.Time `json:"startedAt"`
	UpdatedAt time.Time `json:"updatedAt"`
	Bytes     int64     `json:"bytes"`
	Runs      int       `json:"runs"`
}
