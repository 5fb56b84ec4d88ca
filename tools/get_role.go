package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
)

type getRoleIn struct {
	ID string `json:"id" jsonschema:"the role's id (r-…)"`
}

func getRole() Tool {
	return define("get_role", "Get a Role with its markdown job description.",
		func(ctx context.Context, env *Env, in getRoleIn) (domain.Role, error) {
			if in.ID == "" {
				return domain.Role{}, domain.Required("id")
			}
			return env.Store.GetRole(ctx, in.ID)
		}).annotated("Get role", readOnly|idempotent)
}
