package dispatch_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// TestDMContentNeverReachesTheActivationLog: an agent reads its DMs (a
// read_events result holding DM events beside an ordinary one) and sends a
// DM; what lands on its activation log — which the workers above it read —
// names the DM stream and seqs but holds none of the DM text. The runtime
// speaks Claude's stream-json, parsed by agent.LogLine as the claude,
// builtin and docker runtimes do, so the entries arrive as they would from
// a real agent.
func TestDMContentNeverReachesTheActivationLog(t *testing.T) {
	f := newFixture(t)
	f.hire(t, "w-echo", domain.WorkerAI)
	ctx := t.Context()
	dm, err := f.st.EnsureDM(ctx, "w-owner", "w-echo")
	if err != nil {
		t.Fatal(err)
	}
	var dmSeqs []int64
	for _, body := range []string{"the launch code is 0000", "and the vault is behind the painting"} {
		ev, err := f.st.Append(ctx, domain.Event{StreamID: dm.ID, Source: "w-owner", Message: domain.Message{From: "w-owner", Body: body}}, store.AppendOptions{})
		if err != nil {
			t.Fatal(err)
		}
		dmSeqs = append(dmSeqs, ev.Seq)
	}
	f.publish(t, "w-owner", "an ordinary request")
	read, err := f.st.ReadEvents(ctx, store.EventQuery{StreamIDs: []string{dm.ID, "s-inbox"}})
	if err != nil {
		t.Fatal(err)
	}
	result, _ := json.Marshal(map[string]any{"events": read, "cursor": read[len(read)-1].Seq})

	lines := []any{
		map[string]any{"type": "assistant", "message": map[string]any{"content": []any{
			map[string]any{"type": "tool_use", "id": "t1", "name": "mcp__helix-org__read_events", "input": map[string]any{}},
		}}},
		map[string]any{"type": "user", "message": map[string]any{"content": []any{
			map[string]any{"type": "tool_result", "tool_use_id": "t1", "content": string(result)},
		}}},
		map[string]any{"type": "assistant", "message": map[string]any{"content": []any{
			map[string]any{"type": "tool_use", "id": "t2", "name": "mcp__helix-org__dm", "input": map[string]any{"to": "w-owner", "body": "got it: 0000"}},
		}}},
	}
	f.rec.during = func(run domain.Run) {
		var res domain.RunResult
		for _, l := range lines {
			b, _ := json.Marshal(l)
			agent.LogLine(string(b), run.Log, &res)
		}
	}
	f.publish(t, "w-owner", "wake up")
	f.settle(t)

	log, err := f.st.ReadEvents(ctx, store.EventQuery{StreamIDs: []string{"s-activations-w-echo"}})
	if err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	for _, ev := range log {
		all.WriteString(ev.Message.Body + "\n")
	}
	text := all.String()
	for _, secret := range []string{"0000", "launch code", "vault", "painting"} {
		if strings.Contains(text, secret) {
			t.Errorf("activation log holds DM text %q:\n%s", secret, text)
		}
	}
	for _, want := range []string{
		fmt.Sprintf("tool result held 2 message(s) from %s (seq %d–%d); read them there", dm.ID, dmSeqs[0], dmSeqs[1]),
		"an ordinary request",
		"dm to w-owner: message withheld from this log; its two members read it on " + dm.ID,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("activation log lacks %q:\n%s", want, text)
		}
	}
}
