package tools

import (
	"context"
	"slices"
	"strings"

	"github.com/helixml/helix-org/domain"
)

type hireWorkerIn struct {
	ID       string   `json:"id,omitempty" jsonschema:"the new worker's id (w-…); by default derived from name"`
	Position string   `json:"position" jsonschema:"the position it fills (p-…), below yours"`
	Kind     string   `json:"kind" jsonschema:"human, reached by message; or ai, woken by its streams"`
	Name     string   `json:"name" jsonschema:"the worker's name, e.g. Maya"`
	Identity string   `json:"identity,omitempty" jsonschema:"who the worker is, in markdown: its persona and voice"`
	Grants   []string `json:"grants,omitempty" jsonschema:"tools to grant it at once, from those you hold, e.g. publish"`
}

func hireWorker() Tool {
	return define("hire_worker", "Hire a Worker, human or AI, into a Position below yours, optionally granting tools you hold.",
		func(ctx context.Context, env *Env, in hireWorkerIn) (domain.Worker, error) {
			if err := checkGrantable(ctx, env, "grants", in.Grants...); err != nil {
				return domain.Worker{}, err
			}
			w := domain.Worker{ID: in.ID, Kind: domain.WorkerKind(in.Kind), PositionID: in.Position, Name: in.Name, Identity: in.Identity}
			return env.Store.HireWorker(ctx, env.Caller, w, dedupe(in.Grants))
		}, enum("kind", domain.WorkerKinds)).annotated("Hire worker", adds)
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
