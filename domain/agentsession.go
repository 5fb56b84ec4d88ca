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
	// History is the built-in agent's conversation (its []llm.Message as
	// JSON), which it keeps in the store rather than a CLI's own files;
	// Label is what that conversation had read: a run that continues it
	// is raised by it.
	History []byte `json:"-"`
	Label   Label  `json:"label"`
}
