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
	// Sender is who the transport vouches sent the message. Only a
	// transport's parse sets it, from what the provider authenticated;
	// nothing in the message itself can.
	Sender Sender
	// Wake, when set, is the spec-task item whose builder the message is
	// told to, in its inbox: a review or check on the item's pull request.
	// Only a transport's parse sets it, from the store's own record of
	// which item opened the pull request.
	Wake *ItemRef
	// Via is the transport the message came through when it is stored on
	// a stream of another kind (a forge review on a spec task's local
	// stream), so it is labelled as what it is: outside words.
	Via TransportKind
}

// ItemRef names a spec-task item and the builder working it.
type ItemRef struct {
	Task   string `json:"task"`
	Item   int    `json:"item"`
	Worker string `json:"worker"`
	// URL is the item's pull request, when the reference is to one.
	URL string `json:"url,omitempty"`
}

// Sender is the sender of an inbound message as its provider
// authenticated it. The zero Sender vouches for no one: the message is
// from whatever address it claims, which anyone can claim.
type Sender struct {
	// Address is the contact address (ContactSpec) that reaches the
	// sender alone: an email From whose SPF and author-aligned DKIM
	// passed; a Telegram user's id, which is their private chat with the
	// bot; a Slack IM channel, which only its one person shares with the
	// bot.
	Address string
	// How names the proof, for the record: "spf+dkim", "slack-im",
	// "telegram-user".
	How string
}

// Receipt is what became of one Inbound: the stored event, and whether it
// had been stored before under the same key.
type Receipt struct {
	Event     Event `json:"event"`
	Duplicate bool  `json:"duplicate,omitempty"`
}
