package tools

import (
	"context"
	"fmt"
)

type skipItemIn struct {
	Task   string `json:"task" jsonschema:"the spec task's id (t-…)"`
	Item   int    `json:"item" jsonschema:"the number (seq) of the blocked or pending item to do without"`
	Reason string `json:"reason" jsonschema:"why the task can do without it, kept with the item and told on the task's stream"`
}

func skipItem() Tool {
	return define("skip_item", "Skip a stalled spec-task item (the planner or the reviewer): it is done without, for the reason given, "+
		"and the items waiting for it go on. The other ways out of a stall are re-planning it (submit_spec with replace) or cancelling the task.",
		func(ctx context.Context, env *Env, in skipItemIn) (itemStateOut, error) {
			if err := pullProgress(ctx, env, in.Task); err != nil {
				return itemStateOut{}, err
			}
			it, err := env.Store.SkipItem(ctx, env.Caller, in.Task, in.Item, in.Reason)
			if err != nil {
				return itemStateOut{}, err
			}
			return itemStateOf(it), pushDocs(ctx, env, in.Task, fmt.Sprintf("item %d skipped", it.Seq), nil)
		}).annotated("Skip item", openWorld)
}
