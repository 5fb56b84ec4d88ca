// Package server is helix-org's HTTP surface: one routes() table, per-worker
// authentication, and the per-worker MCP endpoints. It holds no business
// logic; tools and transports do the work, and every tool call, whichever
// handler below answers it, runs through tools.Call.
//
// Parts of the MCP endpoint exist only until the go-sdk catches up, and go
// when it does:
//   - serveCalls (calls.go), the fast path for plain calls of built-in
//     tools: the go-sdk decodes a call some 26 times into fresh 32 KB
//     buffers. TestDirectCallsAnswerAsTheSDK keeps its answers byte for
//     byte the go-sdk's.
//   - serveTasks (tasks.go): the go-sdk has no MCP tasks.
//   - fitAnswers (mcp.go): the go-sdk sets 2026-07-28's cache fields on
//     every version's results and knows nothing of the tasks we declare.
package server
