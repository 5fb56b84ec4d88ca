package dispatch

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// parkTooDeep stops a loop between AI workers: when every trigger w's next
// run would take is deeper than dispatch.max_depth, they are parked and
// the owner gets one incident naming the chain. It reports whether it
// parked anything (then there is no run to start).
func (d *Dispatcher) parkTooDeep(ctx context.Context, w string) bool {
	// Never below 0: what people, inbound transports and the system say
	// (depth 0) always runs.
	limit := max(0, int(d.st.IntSetting(ctx, MaxDepthSetting)))
	reason := fmt.Sprintf("causal depth over dispatch.max_depth (%d): AI workers kept waking each other", limit)
	parked, err := d.st.ParkTooDeep(ctx, w, store.DeepPark{MaxDepth: limit, Reason: reason, Incident: loopIncident})
	if err != nil {
		d.log.Error("check causal depth", "worker", w, "err", err)
		return false
	}
	if len(parked) == 0 {
		return false
	}
	ids := make([]int64, len(parked))
	for i, t := range parked {
		ids[i] = t.ID
	}
	d.appendLog(ctx, w, "", domain.LogEntry{Kind: domain.LogParked, Text: fmt.Sprintf(
		"trigger(s) %s parked: %s. `helix-org triggers release %s` runs them (the chain counts again from 0), `helix-org triggers drop %[3]s` closes them",
		idList(ids), reason, strings.ReplaceAll(idList(ids), ",", ""))})
	d.log.Warn("loop stopped: triggers past max depth parked", "worker", w, "triggers", ids, "max_depth", limit)
	return true
}

// loopIncident is the owner's notice of a stopped loop: who woke whom, on
// which streams, from which first event, and how to go on.
func loopIncident(parked []domain.QueuedTrigger, chain []domain.Event) domain.Message {
	var workers, streams []string
	add := func(list *[]string, v string) {
		if v != "" && !slices.Contains(*list, v) {
			*list = append(*list, v)
		}
	}
	var steps []string
	for _, ev := range chain {
		if ev.Depth > 0 {
			add(&workers, ev.Source)
		}
		add(&streams, ev.StreamID)
		from := ev.Source
		if from == "" {
			from = "system"
		}
		steps = append(steps, fmt.Sprintf("%d. %s on %s from %s", ev.Depth, ev.ID, ev.StreamID, from))
	}
	w := parked[0].WorkerID
	add(&workers, w)
	ids := make([]string, len(parked))
	depth := 0
	for i, t := range parked {
		ids[i] = fmt.Sprint(t.ID)
		depth = max(depth, t.Depth)
	}
	first := chain[0]
	extra, _ := json.Marshal(map[string]any{"kind": "loop", "workers": workers, "streams": streams,
		"firstEvent": first.ID, "triggers": ids, "depth": depth})
	body := fmt.Sprintf("AI workers %s kept waking each other on %s, starting from event %s on %s. "+
		"The trigger(s) %s of %s are %d runs deep, past dispatch.max_depth: parked, not run.\n\n"+
		"Chain (depth. event on stream from):\n%s\n\n"+
		"`helix-org triggers release %s` lets the chain go on; `helix-org triggers drop %[9]s` ends it.",
		strings.Join(workers, ", "), strings.Join(streams, ", "), first.ID, first.StreamID,
		strings.Join(ids, ", "), w, depth, strings.Join(steps, "\n"), strings.Join(ids, " "))
	return domain.Message{Subject: "Loop stopped: " + strings.Join(workers, " ↔ "), Body: body, BodyContentType: "text/plain", Extra: extra}
}
