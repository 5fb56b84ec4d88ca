package tools

import (
	"context"

	"github.com/helixml/helix-org/store"
)

type taskIn struct {
	Task string `json:"task"`
}

func getSpecTask() Tool {
	return define("get_spec_task", "A spec task's state, documents and items.",
		func(ctx context.Context, env *Env, in taskIn) (store.SpecTaskView, error) {
			view, err := env.Store.GetSpecTask(ctx, in.Task)
			if err != nil {
				return view, err
			}
			return view, env.saw(ctx, view.Docs.Label)
		})
}
