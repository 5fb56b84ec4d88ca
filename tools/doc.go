// Package tools holds helix-org's MCP tools, one per file, and the one list
// that registers them. A tool does one thing through the store and chains
// nothing behind the agent's back. Tools never read operational secrets.
package tools
