package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
)

type submitSpecIn struct {
	Task    string       `json:"task"`
	Design  string       `json:"design"`
	Items   []specItemIn `json:"items"`
	Replace int          `json:"replace,omitempty"`
}

type specItemIn struct {
	Seq         int      `json:"seq"`
	Title       string   `json:"title"`
	Description string   `json:"description,omitempty"`
	Files       []string `json:"files,omitempty"`
	Verify      string   `json:"verify,omitempty"`
	BlockedBy   []int    `json:"blockedBy,omitempty"`
}

func submitSpec() Tool {
	return define("submit_spec", "Submit a spec task's design and items; replace re-plans a blocked item.",
		func(ctx context.Context, env *Env, in submitSpecIn) (specStateOut, error) {
			if err := pullProgress(ctx, env, in.Task); err != nil {
				return specStateOut{}, err
			}
			items := make([]domain.TaskItem, len(in.Items))
			for i, it := range in.Items {
				items[i] = domain.TaskItem{Seq: it.Seq, Title: it.Title, Description: it.Description, Files: it.Files, Verify: it.Verify, BlockedBy: it.BlockedBy}
			}
			t, err := env.Store.SubmitSpec(ctx, env.Caller, in.Task, in.Design, items, in.Replace)
			if err != nil {
				return specStateOut{}, err
			}
			return stateOf(t), pushDocs(ctx, env, t.ID, "spec of "+t.ID, nil)
		}).annotated("Submit spec", openWorld)
}
