package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
)

type createRoleIn struct {
	ID      string `json:"id,omitempty"`
	Title   string `json:"title"`
	Content string `json:"content"`
}

func createRole() Tool {
	return define("create_role", "Create a Role: a markdown job description.",
		func(ctx context.Context, env *Env, in createRoleIn) (domain.Role, error) {
			return env.Store.CreateRole(ctx, env.Caller, domain.Role{ID: in.ID, Title: in.Title, Content: in.Content})
		}).annotated("Create role", adds)
}
