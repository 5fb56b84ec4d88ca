package dispatch_test

import (
	"strings"
	"testing"

	"github.com/helixml/helix-org/dispatch"
	"github.com/helixml/helix-org/domain"
)

// TestSteeringQueuedForNextRun: a message sent to a run whose agent takes
// no input while it runs wakes the worker once that run ends, and is the
// next run's, in its prompt, and only its.
func TestSteeringQueuedForNextRun(t *testing.T) {
	f := newFixture(t)
	f.hire(t, "w-echo", domain.WorkerAI)
	f.settle(t)
	f.rec.reset()
	f.rec.during = func(run domain.Run) {
		if len(f.rec.runs) > 1 {
			return
		}
		if _, err := dispatch.MessageActivation(t.Context(), f.st, run.ActivationID, "w-owner", "Use the short form.\nThanks."); err != nil {
			t.Error(err)
		}
	}
	f.publish(t, "w-owner", "first")
	f.settle(t) // the run, then the one the unread message wakes
	if len(f.rec.runs) != 2 {
		t.Fatalf("%d runs, want 2: the one the message was sent to, and the next, woken by it", len(f.rec.runs))
	}
	first, second := f.rec.runs[0], f.rec.runs[1]
	want := "from w-owner to run " + first.ActivationID
	if strings.Contains(first.Prompt, "Use the short form.") {
		t.Errorf("the run the message was sent to has it in its prompt:\n%s", first.Prompt)
	}
	for _, w := range []string{"sent 1 message(s) to your previous run", want, "    Use the short form.\n    Thanks.\n", "arrived after it last looked"} {
		if !strings.Contains(second.Prompt, w) {
			t.Errorf("next run's prompt lacks %q:\n%s", w, second.Prompt)
		}
	}
}
