package tools

import (
	"context"

	"github.com/helixml/helix-org/dispatch"
	"github.com/helixml/helix-org/domain"
)

type cancelActivationIn struct {
	Activation string `json:"activation" jsonschema:"the run to stop: an activation id (a-…) of a worker below you"`
	Drop       bool   `json:"drop,omitempty" jsonschema:"true drops the run's triggers instead of running them again"`
}

type cancelActivationOut struct {
	ID       string                  `json:"id"`
	WorkerID string                  `json:"workerId"`
	Status   domain.ActivationStatus `json:"status"`
}

func cancelActivation() Tool {
	return define("cancel_activation", "Stop a running activation (run) of an AI worker below you; its triggers run again unless drop.",
		func(ctx context.Context, env *Env, in cancelActivationIn) (cancelActivationOut, error) {
			if in.Activation == "" {
				return cancelActivationOut{}, domain.Required("activation")
			}
			a, err := dispatch.CancelActivation(ctx, env.Store, in.Activation, env.Caller, in.Drop)
			return cancelActivationOut{ID: a.ID, WorkerID: a.WorkerID, Status: a.Status}, err
		}).annotated("Cancel run", destructive|idempotent)
}
