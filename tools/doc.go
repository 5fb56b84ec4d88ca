// Package tools holds helix-org's MCP tools, one per file, and the one list
// that registers them. A tool does one thing through the store and chains
// nothing behind the agent's back. Tools never read operational secrets.
//
// Every tool call runs through Call (call.go), whatever brought it: the
// MCP endpoint, a task, the web UI (Invoke), an approved call. Call finds
// the tool, checks the grant, runs the label and approval gate, checks the
// arguments against the strict schema, runs the handler and records the
// call in the audit, in that order; a new kind of tool (outside MCP
// servers) plugs in at lookup and brings its own check, call and answer.
//
// The MCP edge: NewServer gives the go-sdk the tools to list, and its
// receiving middleware callThrough sends every tools/call to Call. Two
// parts exist only until the go-sdk catches up:
//   - the tool handlers the go-sdk holds (answered) only hand back what
//     Call made, because the go-sdk marks a result complete (2026-07-28)
//     only when a tool handler returns it, and offers no hook around a
//     call to put Call in;
//   - checkArgs validates against the strict schema in the go-sdk's
//     wording, because the go-sdk checks arguments only for typed handlers,
//     against the schema it shows, and the schema shown is compact.
//
// The server's own parts of the edge (the fast path, tasks, answer
// fitting) are listed in package server's doc.
package tools
