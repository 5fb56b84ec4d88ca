package tools

import (
	"context"
)

type reviewSpecIn struct {
	Task     string `json:"task"`
	Approve  bool   `json:"approve"`
	Comments string `json:"comments,omitempty"`
}

func reviewSpec() Tool {
	return define("review_spec", "Approve a spec task's spec or work, or request changes.",
		func(ctx context.Context, env *Env, in reviewSpecIn) (specStateOut, error) {
			t, err := env.Store.ReviewSpec(ctx, env.Caller, in.Task, in.Approve, in.Comments)
			if err != nil {
				return specStateOut{}, err
			}
			return stateOf(t), pushDocs(ctx, env, t.ID, "review of "+t.ID+": "+string(t.State), nil)
		}).annotated("Review spec", openWorld)
}
