package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
)

type createPositionIn struct {
	ID        string `json:"id,omitempty" jsonschema:"the new position's id (p-…); by default derived from title"`
	Role      string `json:"role" jsonschema:"the role it is a seat for (r-…)"`
	Title     string `json:"title" jsonschema:"the position's title, e.g. Support 1"`
	ReportsTo string `json:"reportsTo,omitempty" jsonschema:"the position it reports to (p-…); by default yours"`
}

func createPosition() Tool {
	return define("create_position", "Create a Position for a Role: a seat in the org chart below yours, to hire a Worker into.",
		func(ctx context.Context, env *Env, in createPositionIn) (domain.Position, error) {
			return env.Store.CreatePosition(ctx, env.Caller, domain.Position{ID: in.ID, RoleID: in.Role, Title: in.Title, ReportsTo: in.ReportsTo})
		}).annotated("Create position", adds)
}
