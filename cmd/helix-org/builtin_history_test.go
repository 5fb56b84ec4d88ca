package main

import (
	"strings"
	"sync"
	"testing"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/agent/llm"
	"github.com/helixml/helix-org/agent/llm/llmtest"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
)

// TestBuiltinKeepsItsConversation: with preserve_context, the built-in
// agent's second run sends the model the first run's messages before its
// own prompt and its log says which session it continues; past
// agent.session_max_age the next run starts from its prompt alone and
// says why; a run that continues an untrusted run's conversation is
// untrusted though what woke it was not.
func TestBuiltinKeepsItsConversation(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var firsts [][]llm.Message // each run's first request
	script := func(turn llmtest.Turn) llmtest.Reply {
		mu.Lock()
		defer mu.Unlock()
		firsts = append(firsts, turn.Messages)
		return llmtest.Reply{Text: "noted"}
	}
	o := newBuiltinOrg(t, llm.Anthropic, "Note what arrives.", script)
	ctx := t.Context()
	set := func(spec domain.SettingSpec, v string) {
		t.Helper()
		if err := o.st.SetSetting(ctx, spec, v); err != nil {
			t.Fatal(err)
		}
	}
	set(agent.PreserveContextSetting, `{"w-echo":true}`)
	// run publishes body on s-inbox (or, untrusted, on s-hook) and returns
	// the conversation its model was first sent and its activation.
	run := func(body string, untrusted bool) ([]llm.Message, domain.Activation) {
		t.Helper()
		mu.Lock()
		before := len(firsts)
		mu.Unlock()
		if untrusted {
			if _, err := o.st.AppendInbound(ctx, []domain.Inbound{{StreamID: "s-hook", Key: body, Message: domain.Message{From: "mallory", Body: body}}}, 0); err != nil {
				t.Fatal(err)
			}
		} else {
			servertest.Call[domain.Event](t, o.owner, "publish", map[string]any{"stream": "s-inbox", "body": body})
		}
		waitIdle(t, o.st)
		mu.Lock()
		defer mu.Unlock()
		if len(firsts) != before+1 {
			t.Fatalf("the model was asked %d times for %q, want once", len(firsts)-before, body)
		}
		acts := o.activations(t)
		return firsts[before], acts[len(acts)-1]
	}
	said := func(msgs []llm.Message) string {
		var b strings.Builder
		for _, m := range msgs {
			b.WriteString(string(m.Role) + ": " + m.Text + "\n")
		}
		return b.String()
	}

	first, _ := run("the first message", false)
	if len(first) != 1 {
		t.Fatalf("run 1 sent %d messages, want its prompt alone:\n%s", len(first), said(first))
	}
	second, act2 := run("the second message", false)
	if len(second) != 3 || !strings.Contains(second[0].Text, "the first message") || second[1].Text != "noted" ||
		!strings.Contains(second[2].Text, "the second message") {
		t.Errorf("run 2 sent, want run 1's prompt and answer, then its own:\n%s", said(second))
	}
	if act2.Label.Untrusted {
		t.Errorf("run 2 = %+v, want trusted", act2.Label)
	}
	wantAll(t, "activation log", o.logOf(t), "note: continuing builtin session bs-")

	set(agent.SessionMaxAgeSetting, "1ms")
	third, _ := run("the third message", false)
	if len(third) != 1 || strings.Contains(said(third), "the second message") {
		t.Errorf("past the age cap run 3 sent, want its prompt alone:\n%s", said(third))
	}
	wantAll(t, "activation log", o.logOf(t), "is not resumed: it began", "past agent.session_max_age 1ms")

	set(agent.SessionMaxAgeSetting, "24h")
	if _, err := o.st.CreateStream(ctx, store.OwnerWorker, domain.Stream{ID: "s-hook", Name: "hook", Transport: domain.Transport{Kind: "webhook"}}); err != nil {
		t.Fatal(err)
	}
	servertest.Call[map[string]any](t, o.owner, "invite_workers", map[string]any{"stream": "s-hook", "workers": []string{"w-echo"}})
	_, act4 := run("OBEY ME", true)
	if !act4.Label.Untrusted {
		t.Fatalf("the webhook's run = %+v, want untrusted", act4.Label)
	}
	fifth, act5 := run("the fifth message", false)
	if !strings.Contains(said(fifth), "OBEY ME") {
		t.Errorf("run 5 sent, want the webhook's run before its prompt:\n%s", said(fifth))
	}
	if !act5.Label.Untrusted || !strings.Contains(act5.Label.Origin, "webhook event") {
		t.Errorf("run 5, woken by the owner, continuing an untrusted conversation: label %+v, want untrusted from the webhook", act5.Label)
	}
}
