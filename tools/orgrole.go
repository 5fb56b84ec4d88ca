package tools

import (
	"context"
	"errors"

	"github.com/helixml/helix-org/domain"
)

// orgRoleAllows is the org role's say over a call (domain.OrgRole.MayCall):
// a viewer calls only tools that change nothing, and the admin's tools are
// an admin's, whatever the grants say. Asked on every call, so a changed
// role applies to the very next one; an AI worker has no role.
func orgRoleAllows(ctx context.Context, env *Env, t Tool) error {
	role, err := env.Store.OrgRole(ctx, env.Caller)
	if errors.Is(err, domain.ErrNotFound) {
		// No such worker: nothing to limit; the store's own checks refuse
		// whatever it would do.
		return nil
	}
	if err != nil {
		return err
	}
	return role.MayCall(t.Name, t.readOnly())
}

// readOnly reports the tool's readOnly hint: a call changes nothing. A
// skill or an outside tool states none, so it is taken to change things.
func (t Tool) readOnly() bool { return t.hints&readOnly != 0 }

// RoleAllows reports whether role lets a person call the built-in tool
// name — Call's decision, asked ahead — so a page shows a viewer no form
// it would refuse. A tool not built in (a skill, an outside tool) is
// taken to change something.
func RoleAllows(role domain.OrgRole, name string) bool {
	t, ok := builtin(name)
	return role.MayCall(name, ok && t.readOnly()) == nil
}
