package tools

import (
	"context"
	"strconv"
)

type itemIn struct {
	Task string `json:"task" jsonschema:"the spec task's id (t-…)"`
	Item int    `json:"item" jsonschema:"the item's number (seq) in the task's spec"`
}

func claimItem() Tool {
	return define("claim_item", "Take a ready item of a spec task you build, within the task's parallel cap, one item at a time.",
		func(ctx context.Context, env *Env, in itemIn) (itemStateOut, error) {
			if err := pullProgress(ctx, env, in.Task); err != nil {
				return itemStateOut{}, err
			}
			it, err := env.Store.ClaimItem(ctx, env.Caller, in.Task, in.Item)
			if err != nil {
				return itemStateOut{}, err
			}
			return itemStateOf(it), pushDocs(ctx, env, in.Task, "claim of item "+strconv.Itoa(in.Item), nil)
		}).annotated("Claim item", openWorld)
}
