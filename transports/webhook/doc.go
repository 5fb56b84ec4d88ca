// Package webhook connects streams of kind "webhook" to the outside world
// over plain HTTP, following Standard Webhooks (standardwebhooks.com).
//
// Inbound, POST /webhooks/{streamId} turns a request body into an event on
// the stream, verified with the stream's secret when it has one, bounded
// in size and idempotent on webhook-id. Outbound, Sender POSTs every event a
// worker publishes on a stream with an outbound_url, signed the same way;
// the outbox retries it, and the HTTP client
// (safedial) refuses private addresses.
//
// Signing and verification are pure functions; this package never decides
// who may publish or who is woken — the store and dispatcher do.
package webhook
