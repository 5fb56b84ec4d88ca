package tools

import (
	"context"
	"strconv"
)

type itemIn struct {
	Task string `json:"task"`
	Item int    `json:"item"`
}

func claimItem() Tool {
	return define("claim_item", "Claim a ready item of your spec task.",
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
