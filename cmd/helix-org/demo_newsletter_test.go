package main

import (
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/agent/llm"
	"github.com/helixml/helix-org/agent/llm/llmtest"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/transports/email/postmarktest"
)

// TestDemoMLOpsNewsletter is demos/mlops-newsletter/README.md end to end:
// the org built by its setup.sh, the editor, researcher and journalist on
// the built-in agent following their role files, one issue planned,
// researched, written, reviewed and emailed to the subscribers' list
// through a fake Postmark.
func TestDemoMLOpsNewsletter(t *testing.T) {
	t.Parallel()
	fake := llmtest.New(t, llm.Anthropic, followRoles)
	st := demoStore(t)
	pm := usePostmark(t, st, "editor@mlopsweekly.example.com")
	useFake(t, st, llm.Anthropic, fake)
	base, _, owner := startServe(t, st, io.Discard)
	demoTrace(t, st, "w-editor", "w-researcher", "w-journalist")
	runSetup(t, st, base, "mlops-newsletter")
	waitIdle(t, st)

	// README step 3: plan issue 12.
	plan := servertest.Call[domain.Event](t, owner, "publish", map[string]any{"stream": "s-editorial",
		"subject": "Issue 12: feature stores meet vector search", "body": "Lead with what changed for teams running both."})
	got := nextEmail(t, pm)
	waitIdle(t, st)

	want := postmarktest.Email{From: "editor@mlopsweekly.example.com", To: "subscribers@lists.example.com",
		ReplyTo: pmHash + "+newsletter@inbound.postmarkapp.com", Subject: "MLOps Weekly: Issue 12: feature stores meet vector search",
		MessageStream: "outbound"}
	wantAll(t, "the issue", got.TextBody, "Draft: Brief: Lead with what changed for teams running both.",
		"Findings: Feast 0.40 adds vector search", "-- The MLOps Weekly editor")
	issue := demoEvents(t, st, "s-newsletter")
	if len(issue) != 1 || issue[0].Source != "w-editor" || got.Metadata["helix_event"] != issue[0].ID {
		t.Fatalf("s-newsletter holds %+v; want the editor's one issue, the email's (%v)", issue, got.Metadata)
	}
	got.TextBody, got.Metadata = "", nil
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the issue's email (-want +got):\n%s", diff)
	}
	// Editor → researcher → journalist → editor, on the plan's thread.
	for _, hop := range []struct{ stream, from string }{{"s-research", "w-editor"}, {"s-writing", "w-researcher"},
		{"s-review", "w-journalist"}, {"s-newsletter", "w-editor"}} {
		evs := demoEvents(t, st, hop.stream)
		if len(evs) != 1 || evs[0].Source != hop.from || evs[0].Message.ThreadID != plan.ID {
			t.Errorf("%s holds %+v; want one event from %s on thread %s", hop.stream, evs, hop.from, plan.ID)
		}
	}
	if n := len(pm.Sent()); n != 1 {
		t.Errorf("Postmark got %d emails, want the one issue", n)
	}
}
