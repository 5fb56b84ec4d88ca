package tools

import (
	"context"
	"slices"
	"strings"

	"github.com/helixml/helix-org/domain"
)

type hireWorkerIn struct {
	ID       string   `json:"id,omitempty" jsonschema:"optional id such as w-maya; derived from the name when omitted"`
	Position string   `json:"position" jsonschema:"the position to hire into"`
	Kind     string   `json:"kind" jsonschema:"human or ai"`
	Name     string   `json:"name" jsonschema:"display name"`
	Identity string   `json:"identity,omitempty" jsonschema:"identity markdown: who this worker is"`
	Grants   []string `json:"grants,omitempty" jsonschema:"tools to grant at hire, atomically; you can grant only tools you hold"`
}

func hireWorker() Tool {
	return define("hire_worker", "Hire a Worker (human or AI) into a Position below yours in the org chart, optionally with tool grants given in the same step (each ending no later than your own grant of that tool).",
		func(ctx context.Context, env *Env, in hireWorkerIn) (domain.Worker, error) {
			if err := checkGrantable(ctx, env, "grants", in.Grants...); err != nil {
				return domain.Worker{}, err
			}
			w := domain.Worker{ID: in.ID, Kind: domain.WorkerKind(in.Kind), PositionID: in.Position, Name: in.Name, Identity: in.Identity}
			return env.Store.HireWorker(ctx, env.Caller, w, dedupe(in.Grants))
		}, enum("kind", domain.WorkerKinds))
}

// checkGrantable rejects unknown tool names and tools the caller does not
// itself hold, so a grant can never escalate beyond the granter.
func checkGrantable(ctx context.Context, env *Env, field string, tools ...string) error {
	if len(tools) == 0 {
		return nil
	}
	held, err := env.Store.LiveTools(ctx, env.Caller)
	if err != nil {
		return err
	}
	for _, t := range tools {
		if !slices.Contains(env.Known, t) {
			return domain.Invalid(field, "unknown tool %q (valid: %s)", t, strings.Join(env.Known, ", "))
		}
		if !slices.Contains(held, t) {
			return domain.Invalid(field, "you cannot grant %q because you do not hold it", t)
		}
	}
	return nil
}

func dedupe(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}
