package domain

// Inbound is one message the outside world sent to a stream, as a
// transport hands it to the store.
type Inbound struct {
	StreamID string
	Message  Message
	// Key is the provider's id for the message (webhook-id, Postmark's
	// MessageID, X-GitHub-Delivery, Slack's event_id, Telegram's
	// update_id): a stream stores a key at most once, so a retried
	// delivery is a duplicate, not a second event.
	Key string
	// Contents[i], when given, is the content of Message.Attachments[i].
	Contents [][]byte
}

// Receipt is what became of one Inbound: the stored event, and whether it
// had been stored before under the same key.
type Receipt struct {
	Event     Event `json:"event"`
	Duplicate bool  `json:"duplicate,omitempty"`
}
