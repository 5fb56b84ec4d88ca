package domain

import "time"

// DeliveryStatus is where an outbound delivery is in its life.
type DeliveryStatus string

const (
	// DeliveryPending waits for its next attempt.
	DeliveryPending DeliveryStatus = "pending"
	// DeliveryDelivered was accepted by the remote.
	DeliveryDelivered DeliveryStatus = "delivered"
	// DeliveryFailed was given up: out of attempts or a permanent error.
	DeliveryFailed DeliveryStatus = "failed"
	// DeliveryDisabled will not be sent: its stream's endpoint was disabled
	// (e.g. the remote answered 410 Gone), or its stream archived.
	DeliveryDisabled DeliveryStatus = "disabled"
)

// DeliveryStatuses lists the valid statuses.
var DeliveryStatuses = []DeliveryStatus{DeliveryPending, DeliveryDelivered, DeliveryFailed, DeliveryDisabled}

// Delivery is one event on its way out of the org through a transport.
type Delivery struct {
	ID       int64          `json:"id"`
	EventID  string         `json:"eventId"`
	EventSeq int64          `json:"eventSeq"`
	StreamID string         `json:"streamId"`
	Kind     TransportKind  `json:"kind"`
	Status   DeliveryStatus `json:"status"`
	Attempts int            `json:"attempts"`
	// RetriedAfter is how many attempts had been made when an operator
	// last sent the delivery again (retry_delivery): its budget of
	// attempts counts from there.
	RetriedAfter  int        `json:"retriedAfter,omitempty" jsonschema:"attempts already made when an operator last sent it again (retry_delivery); later attempts count from here"`
	NextAttemptAt *time.Time `json:"nextAttemptAt,omitempty"`
	LastStatus    int        `json:"lastStatus,omitempty"`
	LastError     string     `json:"lastError,omitempty"`
	// RemoteID is the remote's id of the delivered message, when it gave
	// one (Slack's ts, Telegram's message_id).
	RemoteID  string            `json:"remoteId,omitempty"`
	CreatedAt time.Time         `json:"createdAt"`
	UpdatedAt time.Time         `json:"updatedAt"`
	Log       []DeliveryAttempt `json:"log,omitempty"`
}

// DeliveryAttempt records one try at a delivery.
type DeliveryAttempt struct {
	Attempt   int           `json:"attempt"`
	StartedAt time.Time     `json:"startedAt"`
	Duration  time.Duration `json:"durationNs"`
	Status    int           `json:"status,omitempty"`
	Error     string        `json:"error,omitempty"`
}
