// Package github receives GitHub repository webhooks on POST /github/webhook
// and turns each delivery into events on the github streams that asked for
// it. It verifies X-Hub-Signature-256 against transport.github's
// webhook_secret before it parses a byte, and stores a delivery at most once
// per stream.
//
// Outbound, Sender posts what a worker publishes on a github stream as a
// comment on the issue or pull request of its thread ("#42"), with
// transport.github's token; it never does anything else on GitHub.
package github
