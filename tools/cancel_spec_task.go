package tools

import (
	"context"
)

type cancelSpecTaskIn struct {
	Task   string `json:"task"`
	Reason string `json:"reason,omitempty"`
}

func cancelSpecTask() Tool {
	return define("cancel_spec_task", "Cancel a spec task.",
		func(ctx context.Context, env *Env, in cancelSpecTaskIn) (specStateOut, error) {
			t, err := env.Store.CancelSpecTask(ctx, env.Caller, in.Task, in.Reason)
			if err != nil {
				return specStateOut{}, err
			}
			return stateOf(t), pushDocs(ctx, env, t.ID, "cancel "+t.ID, nil)
		}).annotated("Cancel spec task", destructive|idempotent|openWorld)
}
