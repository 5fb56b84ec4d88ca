package agent_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/agent"
)

// codexJSON is `codex exec --json` output in its documented shapes: a
// tool call that answers, one that fails with an error, one that answers
// only structured content, and one marked failed with only text.
const codexJSON = `{"type":"thread.started","thread_id":"th-1"}
{"type":"turn.started"}
{"type":"item.started","item":{"id":"item_0","type":"mcp_tool_call","server":"helix-org","tool":"publish","arguments":{"stream":"s-inbox","body":"hi"},"result":null,"error":null,"status":"in_progress"}}
{"type":"item.completed","item":{"id":"item_0","type":"mcp_tool_call","server":"helix-org","tool":"publish","arguments":{"stream":"s-inbox","body":"hi"},"result":{"content":[{"type":"text","text":"{\"id\":\"e-1\"}"}],"structured_content":null},"error":null,"status":"completed"}}
{"type":"item.completed","item":{"id":"item_1","type":"mcp_tool_call","server":"helix-org","tool":"read_events","arguments":{"stream":"s-nope"},"result":null,"error":{"message":"stream \"s-nope\": not found"},"status":"failed"}}
{"type":"item.completed","item":{"id":"item_2","type":"mcp_tool_call","server":"helix-org","tool":"get_worker","arguments":{"id":"w-1"},"result":{"content":[],"structured_content":{"id":"w-1"}},"error":null,"status":"completed"}}
{"type":"item.completed","item":{"id":"item_3","type":"mcp_tool_call","server":"helix-org","tool":"publish","arguments":{},"result":{"content":[{"type":"text","text":"stream is required"}],"structured_content":null},"error":null,"status":"failed"}}
{"type":"item.completed","item":{"id":"item_4","type":"agent_message","text":"Done."}}
{"type":"turn.completed","usage":{"input_tokens":200,"cached_input_tokens":0,"output_tokens":40}}
`

// TestCodexParsesJSONEvents: each MCP tool call codex reports is logged
// as the call and then its result, or its error, paired by the item's id.
func TestCodexParsesJSONEvents(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.jsonl")
	os.WriteFile(out, []byte(codexJSON), 0o600)
	bin := filepath.Join(dir, "codex")
	os.WriteFile(bin, []byte("#!/bin/sh\ncat > /dev/null\ncat "+out+"\n"), 0o755)
	var log logSink
	res, err := (&agent.Codex{Bin: bin}).Run(t.Context(), newRun(t, &log))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`tool_call:publish:{"stream":"s-inbox","body":"hi"}`,
		`tool_result::{"id":"e-1"}`,
		`tool_call:read_events:{"stream":"s-nope"}`,
		`tool_result::error: stream "s-nope": not found`,
		`tool_call:get_worker:{"id":"w-1"}`,
		`tool_result::{"id":"w-1"}`,
		`tool_call:publish:{}`,
		`tool_result::error: stream is required`,
		"assistant::Done.",
	}
	if diff := cmp.Diff(want, log.texts()); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
	log.mu.Lock()
	for i := 0; i+1 < 8; i += 2 {
		call, result := log.entries[i], log.entries[i+1]
		if call.CallID == "" || call.CallID != result.CallID {
			t.Errorf("entries %d and %d: call id %q, result id %q; want the item's id on both", i, i+1, call.CallID, result.CallID)
		}
	}
	log.mu.Unlock()
	if res.Session != "th-1" || res.InputTokens != 200 || res.OutputTokens != 40 {
		t.Errorf("result = session %q, usage %d/%d; want th-1, 200/40", res.Session, res.InputTokens, res.OutputTokens)
	}
	if res.ExitStatus != 0 {
		t.Errorf("exit status %d", res.ExitStatus)
	}
}
