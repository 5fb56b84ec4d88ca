// Package dispatch turns appended events into activations of AI workers:
// a synchronous Dispatch step over the store's trigger outbox plus a thin
// loop. It starts agent runs through domain.Runtime (agent's runtime
// table, in production) and never knows how a runtime works.
package dispatch
