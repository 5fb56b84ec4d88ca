package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/helixml/helix-org/agent/llm"
	"github.com/helixml/helix-org/agent/llm/llmtest"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server/servertest"
)

// constraintID finds the first constraint in an activation prompt.
var constraintID = regexp.MustCompile(`Constraints \(advice that has worked here; follow it\):\n- (i-[a-z0-9]+) `)

// builder scripts a builder that fails any item its prompt gives no
// constraint for, and with one cites it, reports it used and delivers.
func builder(turn llmtest.Turn) llmtest.Reply {
	trigs := llmtest.Triggers(turn.Prompt())
	if len(trigs) == 0 {
		return llmtest.Reply{Text: "Nothing to do."}
	}
	m := constraintID.FindStringSubmatch(turn.Prompt())
	switch {
	case m == nil:
		return llmtest.Reply{Status: 400, Text: "payments_test.go:42: PAYMENTS_SANDBOX_KEY is not set"}
	case turn.CallsTo("insight_feedback") == 0:
		return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("insight_feedback", map[string]any{"ids": []string{m[1]}, "outcome": "utilized"})}}
	case turn.CallsTo("publish") == 0:
		return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("publish", map[string]any{"stream": trigs[0].Stream, "body": "built, following " + m[1]})}}
	}
	return llmtest.Reply{Text: "Done."}
}

// TestMemoryLearnsFromAFailure: a builder fails an item; learn asks the
// reviewer about it in the reviewer's inbox; the answer becomes an insight;
// the next similar item's prompt carries it as a constraint; the builder
// cites it and succeeds, which credits it.
func TestMemoryLearnsFromAFailure(t *testing.T) {
	t.Parallel()
	o := newBuiltinOrg(t, llm.Anthropic, "Build what the inbox asks.", builder)
	call := func(name string, args map[string]any) map[string]any {
		return servertest.Call[map[string]any](t, o.owner, name, args)
	}
	call("grant_tool", map[string]any{"worker": "w-echo", "tool": "insight_feedback"})

	servertest.Call[domain.Event](t, o.owner, "publish", map[string]any{"stream": "s-inbox", "body": "Build the payments refund endpoint"})
	waitIdle(t, o.st)
	if acts := o.activations(t); acts[len(acts)-1].Status != domain.ActivationFailed {
		t.Fatalf("the first item's run: %+v, want failed", acts[len(acts)-1])
	}

	asked := servertest.Call[struct {
		Questions []struct{ ID, Notice, Situation string }
	}](t, o.owner, "learn", map[string]any{"worker": "w-echo"}).Questions
	if len(asked) != 1 || asked[0].Situation != "Build the payments refund endpoint" {
		t.Fatalf("learn asked %+v", asked)
	}
	inbox := servertest.Call[struct{ Events []domain.Event }](t, o.owner, "read_events", map[string]any{"streams": []string{domain.InboxStream("w-owner")}}).Events
	if n := len(inbox); n == 0 || inbox[n-1].ID != asked[0].Notice {
		t.Fatalf("the question is not the newest in the owner's inbox: %+v", inbox)
	}
	wantAll(t, "question", inbox[len(inbox)-1].Message.Body, "w-echo's run", "failed: ", "payments_test.go:42: PAYMENTS_SANDBOX_KEY is not set",
		"It was working on: Build the payments refund endpoint", `store_insight {"question": "`+asked[0].ID+`"`)

	answer := servertest.Call[struct{ Insight struct{ ID string } }](t, o.owner, "store_insight", map[string]any{"question": asked[0].ID,
		"resolution": "export PAYMENTS_SANDBOX_KEY from the vault before running the payments tests", "type": "pattern"}).Insight

	next := servertest.Call[domain.Event](t, o.owner, "publish", map[string]any{"stream": "s-inbox", "body": "Build the payments invoice endpoint"})
	if reply := waitForReply(t, o.owner, "s-inbox", "w-echo", next.Seq); reply.Message.Body != "built, following "+answer.ID {
		t.Errorf("reply = %q, want the builder to cite %s", reply.Message.Body, answer.ID)
	}
	waitIdle(t, o.st)
	turns := o.fake.Turns()
	if p := turns[len(turns)-1].Prompt(); !strings.Contains(p, "- "+answer.ID+" (effectiveness 0.94): when Build the payments refund endpoint → export PAYMENTS_SANDBOX_KEY") {
		t.Errorf("the next item's prompt lacks the answer as a constraint:\n%s", p)
	}
	in, err := o.st.GetInsight(t.Context(), answer.ID)
	if err != nil {
		t.Fatal(err)
	}
	if in.Stats.Injected != 1 || in.Stats.Utilized != 1 || in.Stats.Helped != 1 || in.Tags[0] != domain.TagUserProvided {
		t.Errorf("the answer after the run that used it: %+v, tags %v", in.Stats, in.Tags)
	}
}
