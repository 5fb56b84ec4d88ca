package tools

import (
	"context"
	"fmt"

	"github.com/helixml/helix-org/domain"
)

type reportItemIn struct {
	Task    string `json:"task" jsonschema:"the spec task's id (t-…)"`
	Item    int    `json:"item" jsonschema:"the item's number (seq) you worked"`
	Outcome string `json:"outcome" jsonschema:"delivered: done; partial: done in part, rest becomes a new item; blocked: cannot go on"`
	Summary string `json:"summary" jsonschema:"what you did and how to check it, in markdown"`
	Rest    string `json:"rest,omitempty" jsonschema:"with partial: what is left, as the new item's description"`
}

func reportItem() Tool {
	return define("report_item", "Report on the spec-task item you build: delivered, partial (the rest becomes a new item) or blocked. "+
		"When the task opens pull requests, the server pushes your workspace branch and opens one (per item, or when the last item is delivered); reviews on it reach you.",
		func(ctx context.Context, env *Env, in reportItemIn) (itemStateOut, error) {
			if err := pullProgress(ctx, env, in.Task); err != nil {
				return itemStateOut{}, err
			}
			if err := pullRequestReady(ctx, env, in.Task, domain.ItemOutcome(in.Outcome)); err != nil {
				return itemStateOut{}, err
			}
			it, err := env.Store.ReportItem(ctx, env.Caller, in.Task, in.Item, domain.ItemOutcome(in.Outcome), in.Summary, in.Rest)
			if err != nil {
				return itemStateOut{}, err
			}
			note := fmt.Sprintf("# Item %d: %s\n\n%s by %s\n\n%s\n", it.Seq, it.Title, in.Outcome, env.Caller, in.Summary)
			if it, err = itemPullRequest(ctx, env, in.Task, it); err != nil {
				return itemStateOf(it), err
			}
			return itemStateOf(it), pushDocs(ctx, env, in.Task, fmt.Sprintf("item %d %s", it.Seq, in.Outcome),
				map[string]string{fmt.Sprintf("sessions/%d-%s.md", it.Seq, env.Caller): note})
		}, enum("outcome", domain.ItemOutcomes)).annotated("Report item", openWorld)
}
