package tools

import (
	"context"
)

type reviewSpecIn struct {
	Task     string `json:"task" jsonschema:"the spec task's id (t-…)"`
	Approve  bool   `json:"approve" jsonschema:"true approves the spec (or the finished work); false requests changes"`
	Comments string `json:"comments,omitempty" jsonschema:"what to change, for the planner or builders; needed to request changes"`
}

func reviewSpec() Tool {
	return define("review_spec", "Approve a spec task's spec or finished work, or request changes with comments.",
		func(ctx context.Context, env *Env, in reviewSpecIn) (specStateOut, error) {
			t, err := env.Store.ReviewSpec(ctx, env.Caller, in.Task, in.Approve, in.Comments)
			if err != nil {
				return specStateOut{}, err
			}
			return stateOf(t), pushDocs(ctx, env, t.ID, "review of "+t.ID+": "+string(t.State), nil)
		}).annotated("Review spec", openWorld)
}
