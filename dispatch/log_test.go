package dispatch_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// TestToolResultsNameTheirTool: Claude's stream-json names a result's
// call only by id, and parallel calls may answer out of order; every
// result in the activation log still names its tool and says whether it
// failed.
func TestToolResultsNameTheirTool(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.jsonl")
	os.WriteFile(out, []byte(`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"list_streams","input":{}},{"type":"tool_use","id":"t2","name":"publish","input":{"stream":"s-nope","body":"hi"}}]}}
{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t2","content":"stream \"s-nope\": not found","is_error":true}]}}
{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"{\"streams\":[]}"}]}}
{"type":"result","subtype":"success","is_error":false,"result":"done","usage":{"input_tokens":1,"output_tokens":1}}
`), 0o600)
	bin := filepath.Join(dir, "claude")
	// It answers at once, then reads stdin until the run closes it, as
	// Claude Code does after a turn's result.
	os.WriteFile(bin, []byte("#!/bin/sh\ncat "+out+"\nexec cat > /dev/null\n"), 0o755)
	f := newFixtureWith(t, &agent.Claude{Bin: bin})
	f.hire(t, "w-echo", domain.WorkerAI)
	f.settle(t)

	evs, err := f.st.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{domain.ActivationStreamPrefix + "w-echo"}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range evs {
		var extra struct{ Kind, Tool, Status string }
		json.Unmarshal(e.Message.Extra, &extra)
		if extra.Kind == string(domain.LogToolCall) || extra.Kind == string(domain.LogToolResult) {
			got = append(got, extra.Kind+" "+extra.Tool+" "+extra.Status)
		}
	}
	want := []string{"tool_call list_streams ", "tool_call publish ", "tool_result publish error", "tool_result list_streams ok"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tool entries of the activation log (-want +got):\n%s", diff)
	}
}
