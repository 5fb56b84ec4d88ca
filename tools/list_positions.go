package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
)

type listPositionsIn struct {
	Role string `json:"role,omitempty" jsonschema:"only positions of this role (r-…)"`
}

type listPositionsOut struct {
	Positions []domain.Position `json:"positions"`
}

func listPositions() Tool {
	return define("list_positions", "List the Positions of the org chart, optionally of one Role.",
		func(ctx context.Context, env *Env, in listPositionsIn) (listPositionsOut, error) {
			all, err := env.Store.ListPositions(ctx)
			var out []domain.Position
			for _, p := range all {
				if in.Role == "" || p.RoleID == in.Role {
					out = append(out, p)
				}
			}
			return listPositionsOut{Positions: orEmpty(out)}, err
		}).annotated("List positions", readOnly|idempotent)
}
