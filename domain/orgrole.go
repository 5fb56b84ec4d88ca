package domain

import (
	"slices"
)

// OrgRole is what a person may do in the organisation, on top of the
// chart: the chart says whom a worker manages, the org role whether a
// person may change anything at all, and whether the org's own
// machinery (settings, budgets, transports, invitations) is theirs.
// AI workers have none; they act through the chart alone.
type OrgRole string

const (
	// RoleAdmin runs the org: settings, budgets, transports,
	// invitations and org roles, besides what a member does.
	RoleAdmin OrgRole = "admin"
	// RoleMember acts through the chart and its grants.
	RoleMember OrgRole = "member"
	// RoleViewer reads what its grants allow and changes nothing.
	RoleViewer OrgRole = "viewer"
)

// OrgRoles lists the valid roles, most power first.
var OrgRoles = []OrgRole{RoleAdmin, RoleMember, RoleViewer}

// Validate rejects unknown roles, naming the valid ones.
func (r OrgRole) Validate(field string) error {
	if !slices.Contains(OrgRoles, r) {
		return EnumError(field, "org role", r, OrgRoles)
	}
	return nil
}

// AdminTools are the tools that run the org rather than act in it: only
// an admin calls them, whatever its grants say.
var AdminTools = []string{"set_budget", "invite", "list_invitations", "revoke_invitation", "set_org_role",
	"add_mcp_server", "remove_mcp_server", "enable_endpoint", "retry_delivery"}

// MayCall is the one decision of what an org role lets a person call:
// a viewer only tools that change nothing, a member any tool but the
// admin's, an admin all. The refusal names the role, so the person knows
// whom to ask. An empty role (an AI worker) is not limited here.
func (r OrgRole) MayCall(tool string, readOnly bool) error {
	switch {
	case r == RoleViewer && !readOnly:
		return Forbidden("viewer may not call %s: a viewer reads and changes nothing; an admin can make you a member (set_org_role)", tool)
	case r != RoleAdmin && r != "" && slices.Contains(AdminTools, tool):
		return Forbidden("%s may not call %s: it is an admin's; ask an admin", r, tool)
	}
	return nil
}

// MayChange is the same decision for a change that is not a tool call
// (a form of the web UI): what says what is being done.
func (r OrgRole) MayChange(what string) error {
	if r == RoleViewer {
		return Forbidden("viewer may not %s: a viewer reads and changes nothing; an admin can make you a member (set_org_role)", what)
	}
	return nil
}

// MayAdminister is the decision for the org's machinery outside tools:
// operational settings, a transport's install flow.
func (r OrgRole) MayAdminister(what string) error {
	if r != RoleAdmin {
		return Forbidden("%s may not %s: that is an admin's; ask an admin", r, what)
	}
	return nil
}
