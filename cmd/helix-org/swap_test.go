package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/helixml/helix-org/agent/llm"
	"github.com/helixml/helix-org/agent/llm/llmtest"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/transports/email/postmarktest"
)

// swapScript plays two roles. Support (w-ana) turns a customer's
// "refund order N" into a request on s-billing to p-billing and an
// "invoice order N" into a DM to p-billing, and passes whatever billing
// answers on to s-support; it never names a worker of billing. Billing
// (whoever holds p-billing, when an AI) answers what is addressed to it,
// in reply. Tool errors are recorded.
func swapScript() (llmtest.Script, func() []string) {
	var mu sync.Mutex
	var failed []string
	return func(turn llmtest.Turn) llmtest.Reply {
			if res := turn.Results(); len(res) > 0 {
				mu.Lock()
				defer mu.Unlock()
				for _, r := range res {
					if r.IsError {
						failed = append(failed, r.Content)
					}
				}
				return llmtest.Reply{Text: "Done."}
			}
			support := strings.Contains(turn.System, "Support desk.")
			var calls []llm.ToolCall
			for _, tr := range llmtest.Triggers(turn.Prompt()) {
				f := strings.Fields(tr.Body)
				switch {
				case support && tr.Stream == "s-support" && len(f) == 3 && f[0] == "refund":
					calls = append(calls, llmtest.Call("publish", map[string]any{"stream": "s-billing", "to": []string{"p-billing"}, "body": "May I refund order " + f[2] + "?"}))
				case support && tr.Stream == "s-support" && len(f) == 3 && f[0] == "invoice":
					calls = append(calls, llmtest.Call("dm", map[string]any{"to": "p-billing", "body": "Please resend the invoice of order " + f[2] + "."}))
				case support && tr.Stream != "s-support":
					calls = append(calls, llmtest.Call("publish", map[string]any{"stream": "s-support", "body": "Billing says: " + tr.Body}))
				case !support && (tr.To == "p-billing" || strings.HasPrefix(tr.Stream, domain.DMStreamPrefix)):
					calls = append(calls, llmtest.Call("publish", map[string]any{"stream": tr.Stream, "body": "Yes: " + tr.Body, "inReplyTo": tr.Event}))
				}
			}
			if len(calls) == 0 {
				return llmtest.Reply{Text: "Nothing for me."}
			}
			return llmtest.Reply{Text: "On it.", ToolCalls: calls}
		}, func() []string {
			mu.Lock()
			defer mu.Unlock()
			return slices.Clone(failed)
		}
}

// TestSwapAIForHuman: the billing position is held by an AI, then by a
// human on email, then by an AI again. w-ana, the support worker beside
// it, does the same thing throughout — a request on s-billing addressed
// to p-billing, a DM to p-billing — and each time gets its answer, from
// whoever holds the position, in the thread of its request. The manager
// only dismisses and hires: the new hire takes over s-billing.
func TestSwapAIForHuman(t *testing.T) {
	t.Parallel()
	script, failed := swapScript()
	fake := llmtest.New(t, llm.Anthropic, script)
	st := demoStore(t)
	pm := usePostmark(t, st, "org@example.com")
	useFake(t, st, llm.Anthropic, fake)
	base, _, owner := startServe(t, st, io.Discard)
	call := func(tool string, args map[string]any) {
		t.Helper()
		servertest.Call[map[string]any](t, owner, tool, args)
	}
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"create_role", map[string]any{"id": "r-support", "title": "Support", "content": "Support desk."}},
		{"create_role", map[string]any{"id": "r-billing", "title": "Billing", "content": "Billing desk."}},
		{"create_position", map[string]any{"id": "p-support", "role": "r-support", "title": "Support"}},
		{"create_position", map[string]any{"id": "p-billing", "role": "r-billing", "title": "Billing"}},
		{"create_stream", map[string]any{"id": "s-support", "name": "support"}},
		{"create_stream", map[string]any{"id": "s-billing", "name": "billing"}},
		{"hire_worker", map[string]any{"id": "w-ana", "position": "p-support", "kind": "ai", "name": "Ana", "grants": []string{"publish", "dm"}}},
		{"hire_worker", map[string]any{"id": "w-bill", "position": "p-billing", "kind": "ai", "name": "Bill", "grants": []string{"publish"}}},
		{"invite_workers", map[string]any{"stream": "s-support", "workers": []string{"w-ana", "w-owner"}}},
		{"invite_workers", map[string]any{"stream": "s-billing", "workers": []string{"w-ana", "w-bill"}}},
	} {
		call(c.tool, c.args)
	}
	waitIdle(t, st)

	// ask has a customer's message reach support and returns what support
	// passed on from billing, after checking billing answered on the
	// stream of support's request, in reply to it.
	ask := func(body, holder string, answer func(req domain.Event)) string {
		t.Helper()
		stream := "s-billing"
		if strings.HasPrefix(body, "invoice") {
			stream = domain.DMStreamID("w-ana", holder)
		}
		msg := servertest.Call[domain.Event](t, owner, "publish", map[string]any{"stream": "s-support", "body": body})
		if answer != nil {
			waitIdle(t, st)
			answer(lastFrom(t, st, stream, "w-ana", 0))
		}
		passed := waitForReply(t, owner, "s-support", "w-ana", msg.Seq)
		req, ans := lastFrom(t, st, stream, "w-ana", 0), domain.Event{}
		for _, ev := range demoEvents(t, st, req.StreamID) {
			if ev.Seq > req.Seq && ev.Source == holder {
				ans = ev
			}
		}
		if ans.Message.InReplyTo != req.ID {
			t.Errorf("%s: %s answered %+v on %s, want a reply to %s", body, holder, ans.Message, req.StreamID, req.ID)
		}
		return passed.Message.Body
	}
	byAI := func(holder string) {
		t.Helper()
		if got := ask("refund order 1", holder, nil); got != "Billing says: Yes: May I refund order 1?" {
			t.Errorf("support passed on %q", got)
		}
		if got := ask("invoice order 1", holder, nil); got != "Billing says: Yes: Please resend the invoice of order 1." {
			t.Errorf("support passed on %q", got)
		}
	}

	// 1. An AI holds p-billing.
	byAI("w-bill")

	// 2. A human on email holds it.
	call("dismiss_worker", map[string]any{"id": "w-bill"})
	call("hire_worker", map[string]any{"id": "w-lee", "position": "p-billing", "kind": "human", "name": "Lee"})
	call("set_contact", map[string]any{"worker": "w-lee", "channel": "email", "address": "lee@example.com"})
	n := 0
	byEmail := func(want, reply string) func(domain.Event) {
		return func(req domain.Event) {
			t.Helper()
			got := nextEmail(t, pm)
			if got.To != "lee@example.com" || got.TextBody != want || !strings.Contains(got.Subject, "[helix "+req.ID+" t-") {
				t.Errorf("Lee's email: %+v, want %q about %s", got, want, req.ID)
			}
			n++
			m := postmarktest.Inbound{InboundHash: pmHash, Alias: "w-lee", From: "lee@example.com", Subject: "Re: " + got.Subject,
				Text: reply, Stripped: reply, PostmarkID: fmt.Sprintf("lee-%d", n), MessageID: fmt.Sprintf("<lee-%d@mail.example.com>", n)}
			if code, body := demoPost(t, base+"/email/postmark", m.JSON(), nil, pmUser, pmPassword); code != 200 {
				t.Fatalf("Lee's answer: %d %s", code, body)
			}
		}
	}
	if got := ask("refund order 2", "w-lee", byEmail("May I refund order 2?", "Yes, refund it.")); got != "Billing says: Yes, refund it." {
		t.Errorf("support passed on %q", got)
	}
	if got := ask("invoice order 2", "w-lee", byEmail("Please resend the invoice of order 2.", "Sent again.")); got != "Billing says: Sent again." {
		t.Errorf("support passed on %q", got)
	}

	// 3. An AI again; Lee's mailbox hears no more, and a late email of
	// Lee's is not taken as Lee speaking.
	call("dismiss_worker", map[string]any{"id": "w-lee"})
	call("hire_worker", map[string]any{"id": "w-bill2", "position": "p-billing", "kind": "ai", "name": "Bill 2", "grants": []string{"publish"}})
	waitIdle(t, st)
	byAI("w-bill2")
	late := postmarktest.Inbound{InboundHash: pmHash, Alias: "w-lee", From: "lee@example.com", Subject: "Re: anything", Text: "One more thing.",
		Stripped: "One more thing.", PostmarkID: "lee-late", MessageID: "<lee-late@mail.example.com>"}
	demoPost(t, base+"/email/postmark", late.JSON(), nil, pmUser, pmPassword)
	waitIdle(t, st)
	if sent := pm.Sent(); len(sent) != 2 {
		t.Errorf("Postmark got %d emails, want Lee's 2", len(sent))
	}
	for _, ev := range demoEvents(t, st, "s-billing") {
		if ev.Source == "w-lee" && ev.Message.Body == "One more thing." {
			t.Errorf("a dismissed worker's email spoke on s-billing: %+v", ev)
		}
	}

	// What support did, it did the same way each time, and nothing failed.
	var asked []string
	for _, ev := range demoEvents(t, st, "s-billing") {
		if ev.Source == "w-ana" {
			asked = append(asked, strings.Join(ev.Message.To, ","))
		}
	}
	if strings.Join(asked, " ") != "p-billing p-billing p-billing" {
		t.Errorf("support's requests on s-billing were addressed to %q, want p-billing three times", asked)
	}
	if f := failed(); len(f) != 0 {
		t.Errorf("tool calls failed: %q", f)
	}
}

// lastFrom is the newest event worker published on stream since seq.
func lastFrom(t *testing.T, st *store.Store, stream, worker string, seq int64) domain.Event {
	t.Helper()
	var last domain.Event
	for _, ev := range demoEvents(t, st, stream) {
		if ev.Seq > seq && ev.Source == worker {
			last = ev
		}
	}
	if last.ID == "" {
		t.Fatalf("%s published nothing on %s", worker, stream)
	}
	return last
}
