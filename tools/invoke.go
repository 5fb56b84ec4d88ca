package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/helixml/helix-org/domain"
)

// Invoke runs one tool as env.Caller through Call and answers with the
// handler's output, or a held call's pending approval (Held), or why it
// was refused or failed. It is the one way the web UI changes the org, so
// a page can never do what the same worker could not do over MCP.
func Invoke(ctx context.Context, env *Env, granted []string, name string, args json.RawMessage) (any, error) {
	o := Call(ctx, env, granted, name, args)
	return o.Out, o.Err
}

// findTool is builtin, and callApproved Call, behind a variable:
// decide_approval, itself in All, runs tools of All, a loop Go's
// initialisation order refuses to follow.
var (
	findTool     func(name string) (Tool, bool)
	callApproved func(ctx context.Context, env *Env, granted []string, name string, args json.RawMessage) Outcome
)

func init() { findTool, callApproved = builtin, Call }

// IsBuiltin reports whether name is a built-in tool's (not a skill's).
func IsBuiltin(name string) bool {
	_, ok := builtin(name)
	return ok
}

// ReadOnly reports whether name is a built-in tool that changes nothing
// (its readOnly hint): a call of it may share one read of the store's
// cache epochs (store.WithEpochs).
func ReadOnly(name string) bool {
	t, ok := builtin(name)
	return ok && t.readOnly()
}

// ReadOnlyTools are the names of the built-in tools that change nothing,
// sorted: what a list of calls leaves out to show only what was done.
var ReadOnlyTools = sync.OnceValue(func() []string {
	var names []string
	for _, t := range All() {
		if t.readOnly() {
			names = append(names, t.Name)
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
})

// builtin finds a built-in tool by name.
func builtin(name string) (Tool, bool) {
	i, ok := builtinIndex()[name]
	if !ok {
		return Tool{}, false
	}
	return All()[i], true
}

// builtinIndex is each built-in tool's place in All, by name: a call
// looks its tool up several times, and a scan of All compares ~100 names.
var builtinIndex = sync.OnceValue(func() map[string]int {
	m := make(map[string]int, len(All()))
	for i, t := range All() {
		if _, dup := m[t.Name]; !dup {
			m[t.Name] = i
		}
	}
	return m
})

// checkArgs validates arguments against the input schema and applies its
// defaults. A refusal names each field and what it takes (explainArgs),
// as handlers' errors do, rather than the validator's JSON pointers; a
// page and an MCP client read the same error.
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
		if plain := explainArgs(name, resolved.Schema(), instance); plain != nil {
			return nil, plain
		}
		return nil, badArguments{err}
	}
	return json.Marshal(instance)
}

// badArguments is a schema failure explainArgs cannot word, in the
// validator's words.
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
