package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

type updateRoleIn struct {
	ID      string  `json:"id" jsonschema:"the role's id (r-…)"`
	Title   *string `json:"title,omitempty" jsonschema:"the new title; omitted keeps it"`
	Content *string `json:"content,omitempty" jsonschema:"the new job description in markdown; omitted keeps it"`
}

func updateRole() Tool {
	return define("update_role", "Edit a Role's title or markdown; workers read it from their next run.",
		func(ctx context.Context, env *Env, in updateRoleIn) (domain.Role, error) {
			if in.ID == "" {
				return domain.Role{}, domain.Required("id")
			}
			if in.Title == nil && in.Content == nil {
				return domain.Role{}, domain.Invalid("content", "give title, content or both to change")
			}
			return env.Store.UpdateRole(ctx, env.Caller, in.ID, store.RoleUpdate{Title: in.Title, Content: in.Content})
		}).annotated("Update role", destructive|idempotent)
}
