package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
)

type reportExplorationIn struct {
	Task    string   `json:"task" jsonschema:"the spec task's id (t-…)"`
	Part    int      `json:"part" jsonschema:"the number of the partition you were handed, from 1"`
	Summary string   `json:"summary" jsonschema:"what exists in your partition that the task's prompt touches: structure, frameworks, idioms, tests, how to verify; in markdown"`
	Read    []string `json:"read,omitempty" jsonschema:"the areas of your partition you actually read, as named in the hand-out (a top-level directory, or . for the files at the root); the others count as unknown"`
}

type reportExplorationOut struct {
	Task     string              `json:"task"`
	Part     int                 `json:"part"`
	State    domain.ExploreState `json:"state"`
	Coverage float64             `json:"coverage" jsonschema:"the share of the partition's areas read, 0 to 1"`
	Unknown  []string            `json:"unknown,omitempty" jsonschema:"the partition's areas not read"`
}

func reportExploration() Tool {
	return define("report_exploration", "Report on the partition of a spec task's repository you explored (an explorer): what exists and which areas you read. "+
		"Once every partition is in, the planner is woken with the whole exploration.",
		func(ctx context.Context, env *Env, in reportExplorationIn) (reportExplorationOut, error) {
			p, err := env.Store.ReportExploration(ctx, env.Caller, in.Task, in.Part, in.Summary, in.Read)
			if err != nil {
				return reportExplorationOut{}, err
			}
			return reportExplorationOut{Task: in.Task, Part: p.Part, State: p.State, Coverage: p.Coverage, Unknown: p.Unknown}, nil
		}).annotated("Report exploration", adds)
}
