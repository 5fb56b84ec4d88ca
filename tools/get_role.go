package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
)

type idIn struct {
	ID string `json:"id" jsonschema:"the id to look up"`
}

func getRole() Tool {
	return define("get_role", "Get one Role, including its current markdown content.",
		func(ctx context.Context, env *Env, in idIn) (domain.Role, error) {
			if in.ID == "" {
				return domain.Role{}, domain.Required("id")
			}
			return env.Store.GetRole(ctx, in.ID)
		})
}
