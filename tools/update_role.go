package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

type updateRoleIn struct {
	ID      string  `json:"id" jsonschema:"the role to edit, e.g. r-support"`
	Title   *string `json:"title,omitempty" jsonschema:"new title; unchanged when omitted"`
	Content *string `json:"content,omitempty" jsonschema:"new markdown content; unchanged when omitted"`
}

func updateRole() Tool {
	return define("update_role", "Edit a Role live: workers read the new text on their next activation. You may edit a role when every position holding it is below yours in the org chart; a role no position holds, when you created it.",
		func(ctx context.Context, env *Env, in updateRoleIn) (domain.Role, error) {
			if in.ID == "" {
				return domain.Role{}, domain.Required("id")
			}
			if in.Title == nil && in.Content == nil {
				return domain.Role{}, domain.Invalid("content", "give title, content or both to change")
			}
			return env.Store.UpdateRole(ctx, env.Caller, in.ID, store.RoleUpdate{Title: in.Title, Content: in.Content})
		})
}
