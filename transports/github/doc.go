// Package github receives GitHub repository webhooks on POST /github/webhook
// and turns each delivery into events on the github streams that asked for
// it. It verifies X-Hub-Signature-256 against transport.github's
// webhook_secret before it parses a byte, and stores a delivery at most once
// per stream.
//
// It never writes to GitHub: a worker acts on GitHub through its own tools,
// which is why publishing on a github stream is refused.
package github
