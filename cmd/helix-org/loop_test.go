package main

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/agent/llm"
	"github.com/helixml/helix-org/agent/llm/llmtest"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
)

// answerOnPair scripts a worker told to answer every message on s-pair.
func answerOnPair(t llmtest.Turn) llmtest.Reply {
	if len(t.Results()) > 0 {
		return llmtest.Reply{Text: "Answered."}
	}
	var calls []llm.ToolCall
	for _, tr := range llmtest.Triggers(t.Prompt()) {
		calls = append(calls, llmtest.Call("publish", map[string]any{"stream": "s-pair", "body": "re: " + tr.Event, "inReplyTo": tr.Event}))
	}
	if len(calls) == 0 {
		return llmtest.Reply{Text: "Nothing to do."}
	}
	return llmtest.Reply{Text: "Answering.", ToolCalls: calls}
}

// TestTwoAIWorkersAnsweringEachOtherStopAtMaxDepth: the owner asks w-a
// (on s-start) to talk; w-a and w-b then answer each other on s-pair
// through the real server, dispatcher and built-in agent until the chain
// is dispatch.max_depth (8) runs deep: the next trigger is parked and the
// owner's inbox gets exactly one incident naming the chain.
func TestTwoAIWorkersAnsweringEachOtherStopAtMaxDepth(t *testing.T) {
	t.Parallel()
	fake := llmtest.New(t, llm.Anthropic, answerOnPair)
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "helix-org.db"), store.Options{Transports: transports.Specs(), Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	st.SetSetting(t.Context(), agent.RuntimeSetting, agent.RuntimeBuiltin)
	useFake(t, st, llm.Anthropic, fake)
	_, _, owner := startServe(t, st, io.Discard)
	call := func(name string, args map[string]any) {
		servertest.Call[map[string]any](t, owner, name, args)
	}
	call("create_role", map[string]any{"id": "r-talk", "title": "Talker", "content": "Answer every message on s-pair."})
	call("create_position", map[string]any{"id": "p-talk", "role": "r-talk", "title": "Talker"})
	call("create_stream", map[string]any{"id": "s-start", "name": "start"})
	call("create_stream", map[string]any{"id": "s-pair", "name": "pair"})
	for _, w := range []string{"w-a", "w-b"} {
		call("hire_worker", map[string]any{"id": w, "position": "p-talk", "kind": "ai", "name": w, "grants": []string{"publish"}})
	}
	call("invite_workers", map[string]any{"stream": "s-start", "workers": []string{"w-a", "w-owner"}})
	call("invite_workers", map[string]any{"stream": "s-pair", "workers": []string{"w-a", "w-b", "w-owner"}})
	waitIdle(t, st)

	start := servertest.Call[domain.Event](t, owner, "publish", map[string]any{"stream": "s-start", "body": "talk to w-b"})
	inbox := domain.InboxStream("w-owner")
	waitFor(t, st, "the loop to be parked", func() bool {
		parked, err := st.ListTriggers(t.Context(), store.TriggerQuery{Statuses: []domain.TriggerStatus{domain.TriggerParked}})
		return err == nil && len(parked) > 0
	})
	waitIdle(t, st)

	pair, err := st.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{"s-pair"}})
	if err != nil {
		t.Fatal(err)
	}
	var depths []string
	for _, ev := range pair {
		depths = append(depths, fmt.Sprintf("%s@%d", ev.Source, ev.Depth))
	}
	want := "w-a@1 w-b@2 w-a@3 w-b@4 w-a@5 w-b@6 w-a@7 w-b@8 w-a@9"
	if got := strings.Join(depths, " "); got != want {
		t.Errorf("s-pair = %s, want %s", got, want)
	}
	parked, err := st.ListTriggers(t.Context(), store.TriggerQuery{Statuses: []domain.TriggerStatus{domain.TriggerParked}})
	if err != nil || len(parked) != 1 || parked[0].WorkerID != "w-b" || parked[0].Depth != 9 {
		t.Errorf("parked triggers = %+v, %v; want w-b's at depth 9", parked, err)
	}
	incidents, err := st.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{inbox}})
	if err != nil || len(incidents) != 1 {
		t.Fatalf("owner's inbox = %+v, %v; want one incident", incidents, err)
	}
	var extra struct {
		Workers, Streams []string
		FirstEvent       string
	}
	json.Unmarshal(incidents[0].Message.Extra, &extra)
	if strings.Join(extra.Workers, ",") != "w-a,w-b" || strings.Join(extra.Streams, ",") != "s-start,s-pair" || extra.FirstEvent != start.ID {
		t.Errorf("incident names workers %v, streams %v, first event %s; want w-a,w-b / s-start,s-pair / %s", extra.Workers, extra.Streams, extra.FirstEvent, start.ID)
	}
}

// TestFiftyMessagesFromAPersonAreAllHandled: a person sends one AI worker
// 50 messages at once; every one is answered, coalesced into runs, none
// waits for a guard or is parked.
func TestFiftyMessagesFromAPersonAreAllHandled(t *testing.T) {
	t.Parallel()
	o := newBuiltinOrg(t, llm.Anthropic, "When a message arrives, reply `echo: <body>` on the same stream.", llmtest.FollowRole)
	began := time.Now()
	for i := range 50 {
		servertest.Call[domain.Event](t, o.owner, "publish", map[string]any{"stream": "s-inbox", "body": fmt.Sprintf("message %d", i)})
	}
	waitIdle(t, o.st)
	took := time.Since(began)
	trigs, err := o.st.ListTriggers(t.Context(), store.TriggerQuery{Worker: "w-echo"})
	if err != nil {
		t.Fatal(err)
	}
	done := 0
	for _, tr := range trigs {
		if tr.Kind == domain.TriggerEvent && tr.Status == domain.TriggerDone {
			done++
		} else if tr.Kind == domain.TriggerEvent {
			t.Errorf("trigger %d is %s, want done", tr.ID, tr.Status)
		}
	}
	replies, err := o.st.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{"s-inbox"}})
	if err != nil {
		t.Fatal(err)
	}
	answered := 0
	for _, ev := range replies {
		if ev.Source == "w-echo" && strings.HasPrefix(ev.Message.Body, "echo: message ") {
			answered++
		}
	}
	if done != 50 || answered != 50 {
		t.Errorf("%d triggers done and %d answers, want 50 and 50", done, answered)
	}
	t.Logf("50 messages handled in %d runs, %s", len(o.activations(t))-1, took.Round(time.Millisecond))
}
