// Package outbox is the durable outbound queue of every transport. The
// event log is the outbox: the Engine tails events published by workers on
// streams a delivery.Sender wants, records one delivery per event, and
// attempts it with exponential backoff and jitter until it is delivered,
// given up or its endpoint is disabled. Every attempt is recorded. It
// knows nothing of HTTP or any provider; those live in the transports'
// Senders. It sits beside dispatch (domain and store below it); the
// transports never import it.
package outbox
