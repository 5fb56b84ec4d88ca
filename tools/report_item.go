package tools

import (
	"context"
	"fmt"

	"github.com/helixml/helix-org/domain"
)

type reportItemIn struct {
	Task    string `json:"task"`
	Item    int    `json:"item"`
	Outcome string `json:"outcome"`
	Summary string `json:"summary"`
	Rest    string `json:"rest,omitempty"`
}

func reportItem() Tool {
	return define("report_item", "Report on your spec-task item.",
		func(ctx context.Context, env *Env, in reportItemIn) (itemStateOut, error) {
			if err := pullProgress(ctx, env, in.Task); err != nil {
				return itemStateOut{}, err
			}
			it, err := env.Store.ReportItem(ctx, env.Caller, in.Task, in.Item, domain.ItemOutcome(in.Outcome), in.Summary, in.Rest)
			if err != nil {
				return itemStateOut{}, err
			}
			note := fmt.Sprintf("# Item %d: %s\n\n%s by %s\n\n%s\n", it.Seq, it.Title, in.Outcome, env.Caller, in.Summary)
			return itemStateOf(it), pushDocs(ctx, env, in.Task, fmt.Sprintf("item %d %s", it.Seq, in.Outcome),
				map[string]string{fmt.Sprintf("sessions/%d-%s.md", it.Seq, env.Caller): note})
		}, enum("outcome", domain.ItemOutcomes)).annotated("Report item", openWorld)
}
