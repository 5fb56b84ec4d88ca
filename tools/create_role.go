package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
)

type createRoleIn struct {
	ID      string `json:"id,omitempty" jsonschema:"optional id such as r-support; derived from the title when omitted"`
	Title   string `json:"title" jsonschema:"the role's title, e.g. Support Engineer"`
	Content string `json:"content" jsonschema:"the job description in markdown: what the role does and how it behaves"`
}

func createRole() Tool {
	return define("create_role", "Create a Role: a job description in markdown that workers in its positions follow.",
		func(ctx context.Context, env *Env, in createRoleIn) (domain.Role, error) {
			return env.Store.CreateRole(ctx, env.Caller, domain.Role{ID: in.ID, Title: in.Title, Content: in.Content})
		})
}
