package tools

import (
	"context"

	"github.com/helixml/helix-org/dispatch"
	"github.com/helixml/helix-org/domain"
)

type cancelActivationIn struct {
	Activation string `json:"activation"`
	Drop       bool   `json:"drop,omitempty"`
}

type cancelActivationOut struct {
	ID       string                  `json:"id"`
	WorkerID string                  `json:"workerId"`
	Status   domain.ActivationStatus `json:"status"`
}

func cancelActivation() Tool {
	return define("cancel_activation", "Stop a run below you; its triggers rerun unless drop.",
		func(ctx context.Context, env *Env, in cancelActivationIn) (cancelActivationOut, error) {
			if in.Activation == "" {
				return cancelActivationOut{}, domain.Required("activation")
			}
			a, err := dispatch.CancelActivation(ctx, env.Store, in.Activation, env.Caller, in.Drop)
			return cancelActivationOut{ID: a.ID, WorkerID: a.WorkerID, Status: a.Status}, err
		}).annotated("Cancel run", destructive|idempotent)
}
