package ui_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/server/ui"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

// t0 is when a demo org's clock starts, so golden pages are stable.
var t0 = time.Date(2026, 11, 23, 9, 30, 0, 0, time.UTC)

// demoOrg serves an org with something on every page, on a clock that
// moves only when told: the support team, an engineering lead with an AI
// echo worker mid-run and an AI scout whose run failed, an inbox stream
// with a thread, and a chat between the owner and the echo worker.
func demoOrg(t *testing.T) (*org, *storetest.Clock) {
	t.Helper()
	clock := storetest.NewClock(t0)
	st := storetest.NewWith(t, store.Options{Now: clock.Now, Transports: servertest.Transports})
	h := servertest.StartWith(t, st, server.Config{Settings: append(domain.Settings{}, ui.Settings...)})
	o := &org{h: h, owner: h.Owner(t), base: h.Server.URL}
	tick := func() { clock.Advance(7 * time.Minute) }
	call := func(tool string, args map[string]any) { tick(); o.call(t, tool, args) }

	call("create_role", map[string]any{"id": "r-support", "title": "Support lead", "content": "# Support lead\n\nAnswer every customer **the same day**.\n\n- Read `s-inbox` first thing\n- Hand bugs to engineering\n"})
	call("create_role", map[string]any{"id": "r-agent", "title": "Support agent", "content": "Answer tickets politely."})
	call("create_role", map[string]any{"id": "r-eng", "title": "Engineering lead", "content": "Keep the product working."})
	call("create_role", map[string]any{"id": "r-echo", "title": "Echo", "content": "Reply `echo: <body>` on the stream you were woken by."})
	call("create_position", map[string]any{"id": "p-support", "role": "r-support", "title": "Head of support"})
	call("create_position", map[string]any{"id": "p-agent-1", "role": "r-agent", "title": "Support agent 1", "reportsTo": "p-support"})
	call("create_position", map[string]any{"id": "p-agent-2", "role": "r-agent", "title": "Support agent 2", "reportsTo": "p-support"})
	call("create_position", map[string]any{"id": "p-eng", "role": "r-eng", "title": "Engineering lead"})
	call("create_position", map[string]any{"id": "p-echo", "role": "r-echo", "title": "Echo bot", "reportsTo": "p-eng"})
	call("hire_worker", map[string]any{"id": "w-maya", "position": "p-support", "kind": "human", "name": "Maya", "identity": "Maya runs support. Ask her about **refunds**.", "grants": []string{"publish", "read_events", "dm", "list_workers", "list_positions", "list_roles"}})
	call("hire_worker", map[string]any{"id": "w-scout", "position": "p-agent-1", "kind": "ai", "name": "Scout", "grants": []string{"publish", "read_events"}})
	call("hire_worker", map[string]any{"id": "w-eli", "position": "p-eng", "kind": "human", "name": "Eli"})
	call("hire_worker", map[string]any{"id": "w-echo", "position": "p-echo", "kind": "ai", "name": "Echo", "identity": "A friendly echo.", "grants": []string{"publish", "read_events", "dm"}})
	call("create_stream", map[string]any{"id": "s-inbox", "name": "inbox", "description": "Where customer requests arrive."})
	call("create_stream", map[string]any{"id": "s-hooks", "name": "hooks", "description": "Deploy notifications.", "transport": map[string]any{"kind": "webhook", "config": map[string]any{"secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}}})
	call("invite_workers", map[string]any{"stream": "s-inbox", "workers": []string{"w-owner", "w-maya", "w-echo"}})
	call("create_processor", map[string]any{"id": "proc-refunds", "input": "s-inbox", "kind": "filter", "config": map[string]any{"expr": `message.subject.contains("Refund")`}, "outputs": []string{"s-refunds"}})
	call("publish", map[string]any{"stream": "s-inbox", "subject": "Refund request", "body": "Order **#1042** arrived broken. Can I get a refund?", "to": []string{"w-maya"}, "threadId": "t-1042"})
	call("publish", map[string]any{"stream": "s-inbox", "body": "Looking into it now.", "threadId": "t-1042"})
	call("publish", map[string]any{"stream": "s-inbox", "body": "Refund approved: it goes out today.", "threadId": "t-1042"})
	call("publish", map[string]any{"stream": "s-inbox", "subject": "Weekly numbers", "body": "| day | tickets |\n|---|---|\n| Mon | 12 |\n| Tue | 9 |"})
	call("dm", map[string]any{"to": "w-echo", "body": "Hi Echo, are you there?"})
	tick()
	dm := store.DMStreamID("w-owner", "w-echo")
	if _, err := st.Append(t.Context(), domain.Event{StreamID: dm, Source: "w-echo", Message: domain.Message{From: "w-echo", To: []string{"w-owner"}, Body: "echo: Hi Echo, are you there?"}}, store.AppendOptions{}); err != nil {
		t.Fatal(err)
	}

	// Scout's hire run failed; Echo is mid-run, calling read_events.
	tick()
	if _, _, _, err := st.Claim(t.Context(), "w-scout", "act-scout-1", time.Hour); err != nil {
		t.Fatal(err)
	}
	tick()
	exit := logEntry("w-scout", "act-scout-1", domain.LogExit, "", "failed: agent.model is not set")
	if err := st.FinishActivation(t.Context(), domain.Activation{ID: "act-scout-1", Status: domain.ActivationFailed, Error: "the built-in agent needs agent.model: helix-org config set agent.model <model>"}, exit); err != nil {
		t.Fatal(err)
	}
	tick()
	if _, _, _, err := st.Claim(t.Context(), "w-echo", "act-echo-1", time.Hour); err != nil {
		t.Fatal(err)
	}
	for _, e := range []domain.Event{
		logEntry("w-echo", "act-echo-1", domain.LogStart, "", "activation act-echo-1 started with 2 trigger(s)"),
		logEntry("w-echo", "act-echo-1", domain.LogAssistant, "", "Two messages waiting. Reading the inbox first."),
		logEntry("w-echo", "act-echo-1", domain.LogToolCall, "read_events", `{"streams":["s-inbox"],"wait":30}`),
	} {
		clock.Advance(20 * time.Second)
		if _, err := st.Append(t.Context(), e, store.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Outside input on s-hooks, and a run's write of what only the owner
	// and Echo may read, waiting for the owner to declassify it.
	clock.Advance(20 * time.Second)
	if _, err := st.Subscribe(t.Context(), "w-owner", "s-hooks", "w-owner"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.AppendInbound(t.Context(), []domain.Inbound{{StreamID: "s-hooks", Key: "msg_1",
		Message: domain.Message{From: "deploy-bot", Body: "Deploy 118 finished."}}}, 0); err != nil {
		t.Fatal(err)
	}
	args := json.RawMessage(`{"body":"echo: Hi Echo, are you there?","stream":"s-inbox"}`)
	label := domain.ReadBy([]string{"w-echo", "w-owner"}, "event e-1 on "+dm, "w-owner")
	if _, err := st.RequestApproval(t.Context(), domain.Approval{WorkerID: "w-echo", Tool: "publish", Arguments: args, ArgsHash: domain.ArgsHash(args),
		ActivationID: "act-echo-1", Kind: domain.ApprovalDeclassify, Label: label,
		Why: "publish would let everyone in the org on s-inbox read what only w-echo, w-owner may (since this run read event e-1 on " + dm + ")"}, 24*time.Hour); err != nil {
		t.Fatal(err)
	}
	seedTasksAndMoney(t, o, clock)
	clock.Advance(40 * time.Second)
	return o, clock
}

// logEntry is an activation-log event as the dispatcher writes it.
func logEntry(worker, activation string, kind domain.LogKind, tool, text string) domain.Event {
	extra, _ := json.Marshal(map[string]string{"kind": string(kind), "tool": tool, "activation": activation})
	return domain.Event{StreamID: domain.ActivationStreamPrefix + worker, CausedBy: activation,
		Message: domain.Message{From: worker, Subject: string(kind), Body: text, BodyContentType: "text/plain", Extra: extra}}
}
