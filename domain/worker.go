package domain

import (
	"slices"
	"strings"
	"time"
)

// WorkerKind says whether a Worker is a person or an AI agent.
type WorkerKind string

const (
	WorkerHuman WorkerKind = "human"
	WorkerAI    WorkerKind = "ai"
)

// WorkerKinds lists the valid kinds, in the order shown to users.
var WorkerKinds = []WorkerKind{WorkerHuman, WorkerAI}

// Validate rejects unknown kinds, naming the valid ones.
func (k WorkerKind) Validate(field string) error {
	if !slices.Contains(WorkerKinds, k) {
		return EnumError(field, "worker kind", k, WorkerKinds)
	}
	return nil
}

// MaxIdentity bounds identity markdown.
const MaxIdentity = 64 << 10

// Worker is one hire: a person or agent in a Position. Its ID is immutable
// and never reused, so history always points at the same hire.
type Worker struct {
	ID          string     `json:"id"`
	Kind        WorkerKind `json:"kind"`
	PositionID  string     `json:"positionId"`
	Name        string     `json:"name"`
	Identity    string     `json:"identity,omitempty"`
	HiredBy     string     `json:"hiredBy,omitempty"`
	HiredAt     time.Time  `json:"hiredAt"`
	DismissedAt *time.Time `json:"dismissedAt,omitempty"`
}

// Active reports whether the worker has not been dismissed.
func (w Worker) Active() bool { return w.DismissedAt == nil }

// Validate checks a worker before it is stored.
func (w Worker) Validate() error {
	if w.ID != "" {
		if err := ValidateID("id", PrefixWorker, w.ID); err != nil {
			return err
		}
	}
	if err := w.Kind.Validate("kind"); err != nil {
		return err
	}
	if w.PositionID == "" {
		return Required("position")
	}
	if strings.TrimSpace(w.Name) == "" {
		return Required("name")
	}
	if err := checkLen("name", w.Name, MaxName); err != nil {
		return err
	}
	if len(w.Identity) > MaxIdentity {
		return Invalid("identity", "is %d bytes; the limit is %d", len(w.Identity), MaxIdentity)
	}
	return nil
}

// Grant lets a Worker call one MCP tool, optionally until ExpiresAt.
type Grant struct {
	WorkerID  string     `json:"workerId"`
	Tool      string     `json:"tool"`
	GrantedBy string     `json:"grantedBy,omitempty"`
	CreatedAt time.Time  `json:"createdAt"`
	ExpiresAt *time.Time `json:"expiresAt,omitempty"`
	// Approval "required" holds every call under the grant for a person.
	Approval GrantApproval `json:"approval,omitempty"`
}

// Live reports whether the grant is in force at now.
func (g Grant) Live(now time.Time) bool { return g.ExpiresAt == nil || now.Before(*g.ExpiresAt) }

// Subscription ties a Worker to a Stream.
type Subscription struct {
	WorkerID  string    `json:"workerId"`
	StreamID  string    `json:"streamId"`
	CreatedAt time.Time `json:"createdAt"`
}
