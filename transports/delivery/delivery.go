// Package delivery is the contract between a transport and the outbound
// queue (package outbox): a Sender makes one attempt to deliver one event
// and says how it went in an Outcome. The queue decides when to try again;
// a Sender knows only its provider. It imports domain only, so every
// transport may import it.
package delivery

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/helixml/helix-org/domain"
)

// Sender delivers events to one kind of outside system. One Sender serves
// each transport kind.
type Sender interface {
	// Kind is the transport kind of the streams this Sender serves.
	Kind() domain.TransportKind
	// Wants reports whether events on st go out at all (e.g. a webhook
	// stream with an outbound_url). It is asked once, when an event is
	// first seen.
	Wants(st domain.Stream) bool
	// Send makes one attempt (1-based) to deliver ev. It must return within
	// its own deadline; ctx ends when the engine shuts down. The same event
	// may be sent again after a crash, so senders pass a stable id (the
	// event id) for the receiver to de-duplicate on.
	Send(ctx context.Context, st domain.Stream, ev domain.Event, attempt int) Outcome
}

// Outcome is the result of one attempt. The zero value is success.
type Outcome struct {
	// Err is nil when the event was delivered.
	Err error
	// Status is the remote's status code, when there was one; recorded.
	Status int
	// RetryAfter, when positive, replaces the backoff before the next try.
	RetryAfter time.Duration
	// Permanent stops retrying this delivery: it fails now.
	Permanent bool
	// Disable stops this stream's endpoint (e.g. HTTP 410 Gone): this and
	// every later delivery on the stream are marked disabled, not sent.
	Disable bool
	// RemoteID is the remote's id of the message delivered (Slack's ts,
	// Telegram's message_id), recorded so that an answer quoting it is
	// known to answer this event.
	RemoteID string
}

// Failed reports whether the attempt did not deliver.
func (o Outcome) Failed() bool { return o.Err != nil || o.Disable }

// MaxAttemptsSetting is the key "transport.<kind>.max_attempts": how many
// attempts a delivery on a stream of that kind gets before it is given up.
// Transports list it in their Settings; the engine reads it per delivery,
// so a change applies without a restart.
func MaxAttemptsSetting(kind domain.TransportKind) domain.SettingSpec {
	return domain.SettingSpec{Key: fmt.Sprintf("transport.%s.max_attempts", kind), Type: domain.SettingInt, Default: "8",
		Description: fmt.Sprintf("Attempts an outbound %s delivery gets (exponential backoff with jitter between them) before it is given up.", kind)}
}

// NoRedirects returns a copy of client (a default one when nil) that never
// follows a redirect, so a sender's credentials only ever go to the URL it
// configured.
func NoRedirects(client *http.Client) *http.Client {
	if client == nil {
		client = &http.Client{}
	}
	c := *client
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &c
}
