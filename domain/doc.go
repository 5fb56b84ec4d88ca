// Package domain holds helix-org's types, identifiers, invariants and
// sentinel errors. It is the leaf of the dependency graph: it imports only
// the standard library and knows nothing of storage, HTTP or MCP.
package domain
