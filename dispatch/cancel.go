package dispatch

import (
	"cmp"
	"context"
	"fmt"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// CancelActivation ends a running activation as cancelled, by actor (empty:
// the operator; else a worker that manages the activation's worker): its
// token is revoked and its triggers go back to pending, or are dropped
// with drop. The dispatcher running its agent stops it on its next step;
// a host process the caller can reach is for the caller to stop.
func CancelActivation(ctx context.Context, st *store.Store, id, actor string, drop bool) (domain.Activation, error) {
	a, err := st.GetActivation(ctx, id)
	if err != nil {
		return domain.Activation{}, err
	}
	why := "cancelled by " + cmp.Or(actor, "the operator")
	then := "its trigger(s) run again"
	if drop {
		then = "its trigger(s) are dropped"
	}
	entry := domain.LogEntry{Kind: domain.LogOperator, Text: fmt.Sprintf("activation %s %s; %s", id, why, then)}
	return st.EndActivation(ctx, id, store.Ending{Status: domain.ActivationCancelled, Error: why, Drop: drop, Actor: actor},
		logEvent(a.WorkerID, id, entry))
}

// MessageActivation keeps body, from actor, for the running activation id
// to take (store.SteerActivation), and notes it on the activation log.
func MessageActivation(ctx context.Context, st *store.Store, id, actor, body string) (domain.SteerMessage, error) {
	a, err := st.GetActivation(ctx, id)
	if err != nil {
		return domain.SteerMessage{}, err
	}
	entry := domain.LogEntry{Kind: domain.LogOperator, Text: fmt.Sprintf("%s sent activation %s a message:\n%s", cmp.Or(actor, "the operator"), id, body)}
	return st.SteerActivation(ctx, id, actor, body, logEvent(a.WorkerID, id, entry))
}

// RetryActivation runs an ended activation's triggers again and notes it
// on its worker's activation log.
func RetryActivation(ctx context.Context, st *store.Store, id string) ([]domain.QueuedTrigger, error) {
	trigs, err := st.RetryActivation(ctx, id)
	if err != nil {
		return nil, err
	}
	return trigs, noteOperator(ctx, st, trigs, "of activation "+id+" handed back by the operator: they run again")
}
