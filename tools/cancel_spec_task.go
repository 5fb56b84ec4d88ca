package tools

import (
	"context"
)

type cancelSpecTaskIn struct {
	Task   string `json:"task" jsonschema:"the spec task's id (t-…)"`
	Reason string `json:"reason,omitempty" jsonschema:"why it is cancelled, told to its planner, reviewer and builders"`
}

func cancelSpecTask() Tool {
	return define("cancel_spec_task", "Cancel a spec task; its builders are released. Its creator, its reviewer or a manager of its planner may.",
		func(ctx context.Context, env *Env, in cancelSpecTaskIn) (specStateOut, error) {
			t, err := env.Store.CancelSpecTask(ctx, env.Caller, in.Task, in.Reason)
			if err != nil {
				return specStateOut{}, err
			}
			return stateOf(t), pushDocs(ctx, env, t.ID, "cancel "+t.ID, nil)
		}).annotated("Cancel spec task", destructive|idempotent|openWorld)
}
