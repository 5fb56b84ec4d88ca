package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

type listWorkersIn struct {
	Position         string `json:"position,omitempty" jsonschema:"only workers in this position (p-…)"`
	Kind             string `json:"kind,omitempty" jsonschema:"only human or only AI workers"`
	IncludeDismissed bool   `json:"includeDismissed,omitempty" jsonschema:"true lists dismissed workers too"`
}

type listWorkersOut struct {
	Workers []domain.Worker `json:"workers"`
}

func listWorkers() Tool {
	return define("list_workers", "List Workers, optionally by Position or kind.",
		func(ctx context.Context, env *Env, in listWorkersIn) (listWorkersOut, error) {
			if in.Kind != "" {
				if err := domain.WorkerKind(in.Kind).Validate("kind"); err != nil {
					return listWorkersOut{}, err
				}
			}
			ws, err := env.Store.ListWorkers(ctx, store.WorkerFilter{IncludeDismissed: in.IncludeDismissed, PositionID: in.Position, Kind: domain.WorkerKind(in.Kind)})
			return listWorkersOut{Workers: orEmpty(ws)}, err
		}, enum("kind", domain.WorkerKinds)).annotated("List workers", readOnly|idempotent)
}
