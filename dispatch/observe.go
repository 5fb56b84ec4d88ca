package dispatch

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/helixml/helix-org/domain"
)

// maxReason bounds the failure reason an activation records from its log.
const maxReason = 500

// failureHint remembers the last error an agent reported on its log: a
// non-zero exit status alone does not say why a run failed, and the
// operator reads the activation, not its log.
type failureHint struct {
	mu     sync.Mutex
	text   string
	errors bool // text came from an error entry, which stderr does not override
}

func (h *failureHint) note(e domain.LogEntry) {
	var text string
	isErr := e.Kind == domain.LogError
	switch {
	case isErr:
		text = e.Text
	case e.Kind == domain.LogOutput && strings.HasPrefix(e.Text, "stderr: "):
		text = strings.TrimPrefix(e.Text, "stderr: ")
	}
	text = strings.TrimSpace(text)
	if text == "" {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.errors && !isErr {
		return
	}
	h.text, h.errors = text, h.errors || isErr
}

func (h *failureHint) String() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.text) > maxReason {
		return h.text[:maxReason] + "…"
	}
	return h.text
}

// exitError is the reason an agent that exited with status code failed.
func exitError(code int, hint string) string {
	if hint == "" {
		return fmt.Sprintf("agent exited with status %d", code)
	}
	return fmt.Sprintf("%s (agent exited with status %d)", hint, code)
}

// Observer is told when agents start and runs end; the server's metrics
// implement it, and dispatch never imports them.
type Observer interface {
	ActivationStarted()
	// ActivationFinished: started says whether the run's agent ran (and
	// so was reported started).
	ActivationFinished(outcome domain.ActivationStatus, started bool, took time.Duration)
}

// ended writes the one server-log line of an activation's end and tells
// the observer.
func (d *Dispatcher) ended(act domain.Activation, triggers int, runtime string, started bool, took time.Duration) {
	if d.opts.Observer != nil {
		d.opts.Observer.ActivationFinished(act.Status, started, took)
	}
	level := d.log.Info
	if act.Status != domain.ActivationSucceeded {
		level = d.log.Warn
	}
	level("activation finished", "worker", act.WorkerID, "activation", act.ID, "triggers", triggers, "runtime", runtime,
		"outcome", string(act.Status), "duration", took.Round(time.Millisecond), "input_tokens", act.InputTokens,
		"output_tokens", act.OutputTokens, "reason", act.Error)
}
