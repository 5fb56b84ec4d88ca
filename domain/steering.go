package domain

import "time"

// SteerMessage is a message sent to a worker's running activation
// (message_activation). The running built-in agent takes it between model
// turns; otherwise the worker's next run takes it into its prompt.
// TakenBy names the activation that received it, empty until one has.
type SteerMessage struct {
	ID           int64     `json:"id"`
	WorkerID     string    `json:"workerId"`
	ActivationID string    `json:"activationId"`
	From         string    `json:"from"`
	Body         string    `json:"body"`
	SentAt       time.Time `json:"sentAt"`
	TakenBy      string    `json:"takenBy,omitempty"`
	// Label is what the sender's run had read: the receiving run's label
	// rises by it when it takes the message.
	Label Label `json:"label,omitzero"`
}

// SteeringURI is the MCP resource a running agent reads, between turns,
// for the messages sent to its run; reading it takes them. It returns
// {"messages":[{"from","body","sentAt"}]}.
const SteeringURI = "helix-org://steering"
