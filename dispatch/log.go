package dispatch

import (
	"context"
	"encoding/json"

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
	extra, _ := json.Marshal(map[string]string{"kind": string(e.Kind), "tool": e.Tool, "activation": activation})
	return domain.Event{StreamID: domain.ActivationStreamPrefix + worker, CausedBy: activation, Message: domain.Message{
		From: worker, Subject: string(e.Kind), Body: text, BodyContentType: "text/plain", Extra: extra}}
}
