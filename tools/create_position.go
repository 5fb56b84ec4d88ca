package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
)

type createPositionIn struct {
	ID        string `json:"id,omitempty" jsonschema:"optional id such as p-support-1; derived from the title when omitted"`
	Role      string `json:"role" jsonschema:"the role this position fills, e.g. r-support"`
	Title     string `json:"title" jsonschema:"the position's title"`
	ReportsTo string `json:"reportsTo,omitempty" jsonschema:"the position this one reports to: yours or one below it; yours when omitted (the owner's: the root)"`
}

func createPosition() Tool {
	return define("create_position", "Create a Position below yours in the org chart: a seat for a Role, which a Worker is hired into.",
		func(ctx context.Context, env *Env, in createPositionIn) (domain.Position, error) {
			return env.Store.CreatePosition(ctx, env.Caller, domain.Position{ID: in.ID, RoleID: in.Role, Title: in.Title, ReportsTo: in.ReportsTo})
		})
}
