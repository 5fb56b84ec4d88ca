package main

import (
	"io"
	"testing"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/agent/llm"
	"github.com/helixml/helix-org/agent/llm/llmtest"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server/servertest"
)

// TestDemoNewsroom is demos/newsroom/README.md end to end: the org built
// by its setup.sh, five AI workers on the built-in agent following their
// role files (the model scripted by followRoles), one wire item becoming a
// published piece through scout, editor-in-chief, researcher, journalist,
// fact-checker and the editor-in-chief again; an off-beat item goes
// nowhere.
func TestDemoNewsroom(t *testing.T) {
	t.Parallel()
	fake := llmtest.New(t, llm.Anthropic, followRoles)
	st := demoStore(t)
	st.SetSetting(t.Context(), agent.RuntimeSetting, agent.RuntimeBuiltin)
	useFake(t, st, llm.Anthropic, fake)
	base, _, owner := startServe(t, st, io.Discard)
	staff := []string{"w-scout", "w-editor-in-chief", "w-researcher", "w-journalist", "w-fact-checker"}
	demoTrace(t, st, staff...)
	runSetup(t, st, base, "newsroom")
	waitIdle(t, st)

	// README step 3: two items come in on the wire.
	sport := servertest.Call[domain.Event](t, owner, "publish", map[string]any{"stream": "s-wire",
		"subject": "Late goal sinks league leaders", "body": "A stoppage-time header settled it."})
	item := servertest.Call[domain.Event](t, owner, "publish", map[string]any{"stream": "s-wire",
		"subject": "EU Parliament passes AI Act amendments", "body": "Brussels: MEPs voted 412-87 to require model cards for general-purpose AI."})
	piece := waitForReply(t, owner, "s-published", "w-editor-in-chief", 0)
	waitIdle(t, st)

	if piece.Message.Subject != "EU Parliament passes AI Act amendments" {
		t.Errorf("published headline = %q", piece.Message.Subject)
	}
	wantAll(t, "the published piece", piece.Message.Body, "Draft: Assigned, 400 words. Pitch: Brussels: MEPs voted 412-87",
		"Background: the EU AI Act entered into force", "(Facts checked.)")
	// One thread, the wire item's, from the wire to the site; one event
	// per hand on each stream.
	for _, hop := range []struct{ stream, from string }{{"s-pitches", "w-scout"}, {"s-assignments", "w-editor-in-chief"},
		{"s-research", "w-researcher"}, {"s-drafts", "w-journalist"}, {"s-checked", "w-fact-checker"}, {"s-published", "w-editor-in-chief"}} {
		evs := demoEvents(t, st, hop.stream)
		if len(evs) != 1 || evs[0].Source != hop.from || evs[0].Message.ThreadID != item.ID {
			t.Errorf("%s holds %+v; want one event from %s on thread %s", hop.stream, evs, hop.from, item.ID)
		}
	}
	// The scout read the sport item too, and let it go (s-pitches holds
	// only the AI story, above).
	if !promptedWith(fake, "w-scout", sport.ID) {
		t.Errorf("the scout never saw the sport item")
	}
	// Each hand ran once at hire and once for the story; the editor twice.
	for _, w := range staff[1:] {
		want := 2
		if w == "w-editor-in-chief" {
			want = 3
		}
		if n := demoActivations(t, st, w); n != want {
			t.Errorf("%s ran %d times, want %d", w, n, want)
		}
	}
}
