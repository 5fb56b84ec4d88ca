package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
)

type createPositionIn struct {
	ID        string `json:"id,omitempty"`
	Role      string `json:"role"`
	Title     string `json:"title"`
	ReportsTo string `json:"reportsTo,omitempty"`
}

func createPosition() Tool {
	return define("create_position", "Create a Position for a Role below yours.",
		func(ctx context.Context, env *Env, in createPositionIn) (domain.Position, error) {
			return env.Store.CreatePosition(ctx, env.Caller, domain.Position{ID: in.ID, RoleID: in.Role, Title: in.Title, ReportsTo: in.ReportsTo})
		}).annotated("Create position", adds)
}
