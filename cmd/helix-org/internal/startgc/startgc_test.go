package startgc_test

import (
	"runtime/debug"
	"testing"

	"github.com/helixml/helix-org/cmd/helix-org/internal/startgc"
)

// TestResume: ResumeAt sets the target serve asks for, and a later
// Resume (a command's, or the backstop's) leaves it.
func TestResume(t *testing.T) {
	startgc.ResumeAt(150)
	startgc.Resume()
	if got := debug.SetGCPercent(100); got != 150 {
		t.Errorf("collector target %d after ResumeAt(150) and Resume, want 150", got)
	}
}
