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
			view, err := env.Store.GetSpecTask(ctx, in.Task)
			if err != nil {
				return view, err
			}
			return view, env.saw(ctx, view.Docs.Label)
		}).annotated("Get spec task", readOnly|idempotent)
}
