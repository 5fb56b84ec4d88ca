package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/domain"
)

// Invoke runs one built-in tool as env.Caller, the way a tools/call on the
// caller's MCP endpoint does: a known tool the caller holds no grant for
// is refused with the same error, arguments are checked against the
// tool's input schema, and then the very handler MCP runs is called. It
// is the one way the web UI changes the org, so a page can never do what
// the same worker could not do over MCP. It runs built-in tools; skills
// (skill_<name>) are served over MCP only.
// A call the approval gate holds answers its pending approval instead.
func Invoke(ctx context.Context, env *Env, granted []string, name string, args json.RawMessage) (any, error) {
	t, err := grantedTool(env, granted, name)
	if err != nil {
		return nil, err
	}
	ctx, pending, args, err := gate(ctx, env, t, args)
	if err != nil {
		return nil, err
	}
	if pending != nil {
		return *pending, nil
	}
	return t.run(ctx, env, args)
}

// runApproved runs an approved call as Invoke does, past the gate: the
// grant is checked again (it may have been revoked since), the gate not.
func runApproved(ctx context.Context, env *Env, granted []string, name string, args json.RawMessage) (any, error) {
	t, err := grantedTool(env, granted, name)
	if err != nil {
		return nil, err
	}
	return t.run(ctx, env, args)
}

func grantedTool(env *Env, granted []string, name string) (Tool, error) {
	if !slices.Contains(granted, name) && slices.Contains(env.Known, name) {
		return Tool{}, missingGrant{worker: env.Caller, tool: name}
	}
	t, ok := findTool(name)
	if !ok {
		return Tool{}, domain.Invalid("tool", "unknown tool %q", name)
	}
	return t, nil
}

// findTool is builtin behind a variable: decide_approval, itself in All,
// runs tools of All, a loop Go's initialisation order refuses to follow.
var findTool func(name string) (Tool, bool)

func init() { findTool = builtin }

// run checks arguments against the schema and calls the handler.
func (t Tool) run(ctx context.Context, env *Env, args json.RawMessage) (any, error) {
	args, err := checkArgs(t.Name, t.input, args)
	if err != nil {
		return nil, err
	}
	return t.call(ctx, env, args)
}

// IsBuiltin reports whether name is a built-in tool's (not a skill's).
func IsBuiltin(name string) bool {
	_, ok := builtin(name)
	return ok
}

// builtin finds a built-in tool by name.
func builtin(name string) (Tool, bool) {
	i := slices.IndexFunc(All(), func(t Tool) bool { return t.Name == name })
	if i < 0 {
		return Tool{}, false
	}
	return All()[i], true
}

// checkArgs validates arguments against the input schema and applies its
// defaults, answering with the SDK's wording so a page and an MCP client
// read the same error.
func checkArgs(name string, input func() (*jsonschema.Resolved, error), args json.RawMessage) (json.RawMessage, error) {
	resolved, err := input()
	if err != nil {
		return nil, fmt.Errorf("input schema of %s: %w", name, err)
	}
	v := map[string]any{}
	if len(args) > 0 {
		if err := json.Unmarshal(args, &v); err != nil {
			return nil, fmt.Errorf("arguments of %s are not a JSON object: %v: %w", name, err, domain.ErrInvalid)
		}
	}
	var instance any = v
	if err := resolved.ApplyDefaults(&instance); err != nil {
		return nil, badArguments{err}
	}
	if err := resolved.Validate(&instance); err != nil {
		return nil, badArguments{err}
	}
	return json.Marshal(instance)
}

// badArguments is a schema failure, worded as the SDK words it.
type badArguments struct{ err error }

func (e badArguments) Error() string { return fmt.Sprintf("validating \"arguments\": %v", e.err) }

func (badArguments) Unwrap() error { return domain.ErrInvalid }

// missingGrant is the refusal of a known tool the caller does not hold.
// Over MCP it is the tool error's text; from Invoke it is also forbidden.
type missingGrant struct{ worker, tool string }

func (e missingGrant) Error() string {
	return fmt.Sprintf("missing grant: worker %s does not hold grant %q; a worker with grant_tool can grant it", e.worker, e.tool)
}

func (missingGrant) Unwrap() error { return domain.ErrForbidden }

// InvokeResult runs a built-in tool as a tools/call on the caller's
// endpoint does — grant, approval gate, arguments, handler — and answers
// as that call would: structured content and its text, a link for a large
// result, a held call's pending approval, a failure as a tool error. It
// serves the calls the server answers without the go-sdk: a task's, whose
// context it honours to the end, and the plain calls of built-in tools.
// reached is false when the grant or the gate answered before the tool.
func InvokeResult(ctx context.Context, env *Env, granted []string, name string, args json.RawMessage) (res *mcp.CallToolResult, reached bool, err error) {
	if !slices.Contains(granted, name) && slices.Contains(env.Known, name) {
		res := &mcp.CallToolResult{}
		res.SetError(missingGrant{worker: env.Caller, tool: name})
		return res, false, nil
	}
	t, ok := builtin(name)
	if !ok {
		res := &mcp.CallToolResult{}
		res.SetError(domain.Invalid("name", "unknown tool %q", name))
		return res, false, nil
	}
	ctx, held, args := gateResult(ctx, env, t, args)
	if held != nil {
		return held, false, nil
	}
	res, err = callResult(ctx, env, &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: name, Arguments: args}}, name, t.input, t.call)
	return res, true, err
}
