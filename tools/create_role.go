package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
)

type createRoleIn struct {
	ID      string `json:"id,omitempty" jsonschema:"the new role's id (r-…); by default derived from title"`
	Title   string `json:"title" jsonschema:"the role's title, e.g. Support"`
	Content string `json:"content" jsonschema:"the job description in markdown: what the role does, its streams and tools"`
}

func createRole() Tool {
	return define("create_role", "Create a Role: a job description in markdown that the workers holding it read on every run.",
		func(ctx context.Context, env *Env, in createRoleIn) (domain.Role, error) {
			return env.Store.CreateRole(ctx, env.Caller, domain.Role{ID: in.ID, Title: in.Title, Content: in.Content})
		}).annotated("Create role", adds)
}
