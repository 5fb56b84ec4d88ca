package tools

import (
	"context"

	"github.com/helixml/helix-org/store"
)

type listSpecTasksOut struct {
	Tasks []store.SpecTaskSummary `json:"tasks"`
}

func listSpecTasks() Tool {
	return define("list_spec_tasks", "List spec tasks with their state and items done, highest priority first.",
		func(ctx context.Context, env *Env, _ struct{}) (listSpecTasksOut, error) {
			ts, err := env.Store.ListSpecTasks(ctx)
			return listSpecTasksOut{Tasks: orEmpty(ts)}, err
		}).annotated("List spec tasks", readOnly|idempotent)
}
