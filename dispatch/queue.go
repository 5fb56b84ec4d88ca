package dispatch

import (
	"context"
	"fmt"
	"strings"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// DropReason is what a dropped trigger records.
const DropReason = "dropped by the operator"

// ReleaseTriggers hands waiting (parked or pending) triggers back to
// pending with their attempts reset — a running server runs them on its
// next step — and notes it on each worker's activation log.
func ReleaseTriggers(ctx context.Context, st *store.Store, sel store.TriggerSelection) ([]domain.QueuedTrigger, error) {
	trigs, err := st.ReleaseTriggers(ctx, sel)
	if err != nil {
		return nil, err
	}
	return trigs, noteOperator(ctx, st, trigs, "released by the operator: they run again")
}

// DropTriggers closes waiting triggers without a run, recorded on each
// trigger and on its worker's activation log.
func DropTriggers(ctx context.Context, st *store.Store, sel store.TriggerSelection) ([]domain.QueuedTrigger, error) {
	trigs, err := st.DropTriggers(ctx, sel, DropReason)
	if err != nil {
		return nil, err
	}
	return trigs, noteOperator(ctx, st, trigs, DropReason+": they will not run")
}

// noteOperator logs one entry per worker naming the triggers and events.
func noteOperator(ctx context.Context, st *store.Store, trigs []domain.QueuedTrigger, what string) error {
	byWorker := map[string][]string{}
	var order []string
	for _, t := range trigs {
		if _, ok := byWorker[t.WorkerID]; !ok {
			order = append(order, t.WorkerID)
		}
		byWorker[t.WorkerID] = append(byWorker[t.WorkerID], fmt.Sprintf("%d (%s event %s on %s)", t.ID, t.Kind, t.EventID, t.StreamID))
	}
	for _, w := range order {
		text := fmt.Sprintf("trigger(s) %s %s", strings.Join(byWorker[w], ", "), what)
		if _, err := st.Append(ctx, logEvent(w, "", domain.LogEntry{Kind: domain.LogOperator, Text: text}), store.AppendOptions{}); err != nil {
			return fmt.Errorf("done, but noting it on the activation log of %s failed: %w", w, err)
		}
	}
	return nil
}
