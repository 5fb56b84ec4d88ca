package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
)

type listRolesOut struct {
	Roles []domain.Role `json:"roles"`
}

func listRoles() Tool {
	return define("list_roles", "List every Role with its markdown job description.",
		func(ctx context.Context, env *Env, _ struct{}) (listRolesOut, error) {
			roles, err := env.Store.ListRoles(ctx)
			return listRolesOut{Roles: orEmpty(roles)}, err
		}).annotated("List roles", readOnly|idempotent)
}

// orEmpty keeps JSON output a list, never null.
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
