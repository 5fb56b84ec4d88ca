package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
)

type submitSpecIn struct {
	Task    string       `json:"task" jsonschema:"the spec task's id (t-…)"`
	Design  string       `json:"design" jsonschema:"the design, in markdown"`
	Items   []specItemIn `json:"items" jsonschema:"the work, as items builders take one at a time"`
	Replace int          `json:"replace,omitempty" jsonschema:"in implementation: the number of a blocked item these items replace"`
}

type specItemIn struct {
	Seq         int      `json:"seq" jsonschema:"the item's number, unique in the task, from 1"`
	Title       string   `json:"title" jsonschema:"what the item delivers, in a line"`
	Description string   `json:"description,omitempty" jsonschema:"what to do, in markdown"`
	Files       []string `json:"files,omitempty" jsonschema:"the files it is expected to touch, by path"`
	Verify      string   `json:"verify,omitempty" jsonschema:"how to check it is done, e.g. a command to run"`
	Delta       string   `json:"delta,omitempty" jsonschema:"what the item changes in what exists (from the exploration): added, changed, removed"`
	Framework   string   `json:"framework,omitempty" jsonschema:"the framework or library it builds with, e.g. net/http or React"`
	Idioms      []string `json:"idioms,omitempty" jsonschema:"conventions of the code base to keep, one per entry, e.g. table tests"`
	Budget      int      `json:"budget,omitempty" jsonschema:"the most tool calls the item should take, 1 to 1000; 0 or absent: no budget"`
	BlockedBy   []int    `json:"blockedBy,omitempty" jsonschema:"numbers of the items that must be done first"`
}

func submitSpec() Tool {
	return define("submit_spec", "Submit a spec task's design and items (the planner); replace re-plans a blocked item. Refused while the planner's clarifying question waits for its answer.",
		func(ctx context.Context, env *Env, in submitSpecIn) (specStateOut, error) {
			if err := pullProgress(ctx, env, in.Task); err != nil {
				return specStateOut{}, err
			}
			items := make([]domain.TaskItem, len(in.Items))
			for i, it := range in.Items {
				items[i] = domain.TaskItem{Seq: it.Seq, Title: it.Title, Description: it.Description, Files: it.Files, Verify: it.Verify,
					Delta: it.Delta, Framework: it.Framework, Idioms: it.Idioms, Budget: it.Budget, BlockedBy: it.BlockedBy}
			}
			t, err := env.Store.SubmitSpec(ctx, env.Caller, in.Task, in.Design, items, in.Replace)
			if err != nil {
				return specStateOut{}, err
			}
			return stateOf(t), pushDocs(ctx, env, t.ID, "spec of "+t.ID, nil)
		}).annotated("Submit spec", openWorld)
}
