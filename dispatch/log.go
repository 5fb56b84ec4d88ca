package dispatch

import (
	"context"
	"encoding/json"
	"strings"
	"sync"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// MaxLogText bounds one activation-log entry so a chatty agent cannot
// flood the store.
const MaxLogText = 32 << 10

// appendLog publishes one entry on the worker's activation stream. These
// events are written by the system and never wake anyone.
func (d *Dispatcher) appendLog(ctx context.Context, worker, activation string, e domain.LogEntry) {
	if _, err := d.st.Append(ctx, logEvent(worker, activation, e), store.AppendOptions{}); err != nil {
		d.log.Error("append activation log", "worker", worker, "activation", activation, "err", err)
	}
}

// logEvent renders a log entry as an event on the worker's activation
// stream. Every entry passes here, so this is where DM content is redacted.
func logEvent(worker, activation string, e domain.LogEntry) domain.Event {
	e = redactDM(worker, e)
	text := e.Text
	if len(text) > MaxLogText {
		text = text[:MaxLogText] + "\n… (truncated)"
	}
	if text == "" {
		text = string(e.Kind)
	}
	fields := map[string]string{"kind": string(e.Kind), "tool": e.Tool, "activation": activation}
	if e.Kind == domain.LogToolResult {
		fields["status"] = resultStatus(e.Text)
	}
	extra, _ := json.Marshal(fields)
	return domain.Event{StreamID: domain.ActivationStreamPrefix + worker, CausedBy: activation, Message: domain.Message{
		From: worker, Subject: string(e.Kind), Body: text, BodyContentType: "text/plain", Extra: extra}}
}

// resultStatus is a tool result's outcome, "ok" or "error": every runtime
// writes a failed call's result as "error: …".
func resultStatus(text string) string {
	if strings.HasPrefix(text, "error: ") {
		return "error"
	}
	return "ok"
}

// toolNames names each tool result after the call it answers, for the
// agents whose results carry only the call's id (Claude's stream-json,
// Gemini CLI's events). One lives as long as one run.
type toolNames struct {
	mu    sync.Mutex
	calls map[string]string
}

func (n *toolNames) name(e domain.LogEntry) domain.LogEntry {
	if e.CallID == "" {
		return e
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	switch e.Kind {
	case domain.LogToolCall:
		if n.calls == nil {
			n.calls = map[string]string{}
		}
		n.calls[e.CallID] = e.Tool
	case domain.LogToolResult:
		if e.Tool == "" {
			e.Tool = n.calls[e.CallID]
		}
		delete(n.calls, e.CallID)
	}
	return e
}
