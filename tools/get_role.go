package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
)

type idIn struct {
	ID string `json:"id"`
}

func getRole() Tool {
	return define("get_role", "A Role with its markdown.",
		func(ctx context.Context, env *Env, in idIn) (domain.Role, error) {
			if in.ID == "" {
				return domain.Role{}, domain.Required("id")
			}
			return env.Store.GetRole(ctx, in.ID)
		}).annotated("Get role", readOnly|idempotent)
}
