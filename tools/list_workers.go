package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

type listWorkersIn struct {
	Position         string `json:"position,omitempty"`
	Kind             string `json:"kind,omitempty"`
	IncludeDismissed bool   `json:"includeDismissed,omitempty"`
}

type listWorkersOut struct {
	Workers []domain.Worker `json:"workers"`
}

func listWorkers() Tool {
	return define("list_workers", "List Workers.",
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
