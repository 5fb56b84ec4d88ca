package tools

import (
	"context"
	"strings"

	"github.com/helixml/helix-org/domain"
)

type cancelSpecTaskIn struct {
	Task   string `json:"task" jsonschema:"the spec task's id (t-…), or a recurring task's schedule stream (s-every-…) to stop it starting more"`
	Reason string `json:"reason,omitempty" jsonschema:"why it is cancelled, told to its planner, reviewer and builders"`
}

func cancelSpecTask() Tool {
	return define("cancel_spec_task", "Cancel a spec task; its builders are released. Its creator, its reviewer or a manager of its planner may. "+
		"Given a recurring task's schedule stream, stop it starting tasks (the one it started last goes on).",
		func(ctx context.Context, env *Env, in cancelSpecTaskIn) (specStateOut, error) {
			if strings.HasPrefix(in.Task, domain.PrefixStream) {
				return specStateOut{}, env.Store.StopRecurringSpecTask(ctx, env.Caller, in.Task, in.Reason)
			}
			t, err := env.Store.CancelSpecTask(ctx, env.Caller, in.Task, in.Reason)
			if err != nil {
				return specStateOut{}, err
			}
			return stateOf(t), pushDocs(ctx, env, t.ID, "cancel "+t.ID, nil)
		}).annotated("Cancel spec task", destructive|idempotent|openWorld)
}
