// Package ui is helix-org's web UI: server-rendered pages under /ui/, one
// handler per file, templates and assets embedded in the binary, and live
// updates over Server-Sent Events.
//
// A person signs in as a human worker and sees and does exactly what that
// worker's grants allow over MCP: every change goes through tools.Invoke,
// the same handlers MCP runs, never a second path into the store. The
// package must not load anything from another origin, inline a script or
// style, or pass raw HTML from markdown through.
package ui
