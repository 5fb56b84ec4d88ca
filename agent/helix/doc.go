// Package helix is the helix runtime: each AI worker's activations run on
// a Helix control plane (helixml/helix), in a project, agent app and git
// repository of the worker's own, through one long-lived chat session that
// later activations queue their prompts on. It speaks Helix's HTTP API
// (Client) through safedial, keeps what it made in the store
// (domain.HelixWorkspace), and reaches the org only as every runtime does:
// the worker's MCP endpoint, with the run's token, which Helix holds as a
// secret of the worker's app. It never writes a token into the repository
// or the app's config.
//
// helixtest holds the fake Helix control plane the tests run against.
package helix
