// Package agent holds the runtimes that carry out one activation: an
// external command, Claude Code, the built-in LLM loop, or a container.
// It depends on domain, agent/llm and the MCP client, never on the store:
// an agent acts on the org only through its MCP endpoint.
package agent
