// Package server is helix-org's HTTP surface: one routes() table, per-worker
// authentication, and the per-worker MCP endpoints. It holds no business
// logic; tools and transports do the work.
package server
