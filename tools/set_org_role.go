package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
)

type setOrgRoleIn struct {
	Worker string `json:"worker" jsonschema:"the person (a human worker, w-…)"`
	Role   string `json:"role" jsonschema:"their org role: admin runs the org (settings, budgets, transports, invitations), member acts through the chart, viewer only reads"`
}

type setOrgRoleOut struct {
	Worker string `json:"worker"`
	Role   string `json:"role"`
	Before string `json:"before" jsonschema:"the role they had"`
}

func setOrgRole() Tool {
	return define("set_org_role", "Make a person an admin, member or viewer: what they may do at all, whatever their grants (the owner is always admin). An admin's.",
		func(ctx context.Context, env *Env, in setOrgRoleIn) (setOrgRoleOut, error) {
			if in.Worker == "" {
				return setOrgRoleOut{}, domain.Required("worker")
			}
			if in.Role == "" {
				return setOrgRoleOut{}, domain.Required("role")
			}
			before, err := env.Store.SetOrgRole(ctx, env.Caller, in.Worker, domain.OrgRole(in.Role))
			return setOrgRoleOut{Worker: in.Worker, Role: in.Role, Before: string(before)}, err
		}, enum("role", domain.OrgRoles)).annotated("Set a person's access", destructive|idempotent)
}
