package tools

import (
	"context"

	"github.com/helixml/helix-org/store"
)

type taskIn struct {
	Task string `json:"task" jsonschema:"the spec task's id (t-…)"`
}

func getSpecTask() Tool {
	return define("get_spec_task", "Get a spec task: its state, documents (requirements, design, progress), items and who works on what.",
		func(ctx context.Context, env *Env, in taskIn) (store.SpecTaskView, error) {
			return env.Store.GetSpecTask(ctx, in.Task)
		}).annotated("Get spec task", readOnly|idempotent)
}
