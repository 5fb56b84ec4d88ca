package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/domain"
)

// Outcome is how a call through Call ended.
type Outcome struct {
	// Tool is the name called.
	Tool string
	// Out is the handler's answer, or a held call's pending approval
	// (Held tells them apart).
	Out any
	// Err is why the call was refused or failed; a *jsonrpc.Error is a
	// protocol error rather than a tool error.
	Err error
	// Status is how the audit records the call.
	Status domain.CallStatus
	// Reached: the call got past the grant and the gate to the tool's own
	// part, its argument check and handler — what the go-sdk counts as a
	// tool's handler and marks complete (2026-07-28).
	Reached bool

	tool    Tool
	unknown bool
	label   domain.Label
}

// Call is the one way a tool call runs, whatever brought it: the MCP
// endpoint (through the go-sdk or the server's fast path), a task, the
// web UI, an approved call. In order it
//
//  1. finds the tool: built-in, skill_<name>, <server>__<tool> of an
//     outside server, or find_tools for a caller whose catalog is
//     searched (lookup);
//  2. checks the caller holds a grant of it, and that a person's org role
//     allows it (orgrole.go: a viewer changes nothing, the admin's tools
//     are an admin's) — refused if not;
//  3. runs the label and approval gate (gate.go): a held call answers its
//     pending approval and goes no further; the context carries the run's
//     label for what the call writes;
//  4. checks the arguments against the tool's strict schema;
//  5. runs the tool's handler — the one place a tool's code runs — which
//     raises the run's label by what it read (Env.saw);
//  6. records the call in the audit (store.RecordCall), its arguments
//     redacted, with how it ended, how long it took and the run's label.
//
// An approved call (Env.approved) runs the same way past the gate, which
// a person already passed it through.
func Call(ctx context.Context, env *Env, granted []string, name string, args json.RawMessage) Outcome {
	start := time.Now()
	o := runCall(ctx, env, granted, name, args)
	env.record(o, args, time.Since(start))
	return o
}

func runCall(ctx context.Context, env *Env, granted []string, name string, args json.RawMessage) Outcome {
	o := Outcome{Tool: name, Status: domain.CallRefused}
	if o.tool, o.unknown, o.Err = grantedTool(env, granted, name); o.Err != nil {
		return o
	}
	if o.Err = orgRoleAllows(ctx, env, o.tool); o.Err != nil {
		return o
	}
	ctx, args, held := o.gate(ctx, env, args)
	if held {
		return o
	}
	o.Reached, o.Status = true, domain.CallError
	checked, err := o.tool.check(args)
	if err != nil {
		o.Err = err
		return o
	}
	if o.Out, o.Err = o.tool.call(ctx, env, checked); o.Err == nil {
		o.Status = domain.CallOK
	}
	return o
}

// grantedTool finds the tool called, if the caller holds a grant of it;
// unknown says there is no such tool.
func grantedTool(env *Env, granted []string, name string) (t Tool, unknown bool, err error) {
	if !slices.Contains(granted, name) && slices.Contains(env.Known, name) {
		return t, false, missingGrant{worker: env.Caller, tool: name}
	}
	t, ok := lookup(env, name)
	if !ok {
		return t, true, domain.Invalid("name", "unknown tool %q", name)
	}
	if !t.given && !slices.Contains(granted, name) {
		return t, false, missingGrant{worker: env.Caller, tool: name}
	}
	return t, false, nil
}

// gate runs the label and approval gate (gate.go) on the call and keeps
// the run's label for the audit. held is true when the gate answered: a
// pending approval, or why the gate failed. An approved call, and a tool
// given rather than granted, pass.
func (o *Outcome) gate(ctx context.Context, env *Env, args json.RawMessage) (context.Context, json.RawMessage, bool) {
	if env.approved != nil {
		o.label = env.approved.Label
		return ctx, args, false
	}
	if o.tool.given {
		return ctx, args, false
	}
	g, err := gate(ctx, env, o.tool, args)
	o.label = g.label
	switch {
	case err != nil:
		o.Status, o.Err = domain.CallError, err
		return ctx, nil, true
	case g.pending != nil:
		o.Status, o.Out = domain.CallPending, *g.pending
		return ctx, nil, true
	}
	return g.ctx, g.args, false
}

// lookup finds what a call of name runs.
func lookup(env *Env, name string) (Tool, bool) {
	if name == FindTools().Name && env.Catalog != nil && env.Catalog.Searching() {
		t := FindTools()
		t.given = true
		return t, true
	}
	if t, ok := findTool(name); ok {
		return t, true
	}
	if strings.HasPrefix(name, domain.SkillToolPrefix) {
		return skillTool(env, name)
	}
	if domain.IsOutsideTool(name) {
		return outsideTool(env, name)
	}
	return Tool{}, false
}

// record writes the call's audit record; the store redacts its arguments.
func (e *Env) record(o Outcome, args json.RawMessage, took time.Duration) {
	rec := domain.ToolCall{Worker: e.Caller, Activation: e.ActivationID, Tool: o.Tool, Arguments: args, Status: o.Status,
		DurationMs: float64(took.Microseconds()) / 1000, Label: o.label}
	if o.Err != nil {
		rec.Error = o.Err.Error()
	}
	if a, held := Held(o.Out); held {
		rec.Approval = a.ID
	}
	if e.approved != nil {
		rec.Approval = e.approved.ID
	}
	e.Store.RecordCall(rec)
}

// Result is the outcome as a tools/call answers it: the output as
// structured content and its JSON text (a link instead when large), a
// held call's pending approval, a failure as a tool error, and a
// protocol error (*jsonrpc.Error) as the error.
func (o Outcome) Result(ctx context.Context, env *Env) (*mcp.CallToolResult, error) {
	res := &mcp.CallToolResult{}
	if a, held := Held(o.Out); held {
		p := o.Out.(pendingOut)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "pending approval " + a.ID + ". " + p.Note}},
			StructuredContent: p}, nil
	}
	if o.Err != nil {
		var wire *jsonrpc.Error
		if errors.As(o.Err, &wire) {
			return nil, wire
		}
		res.SetError(o.Err)
		return res, nil
	}
	text, structured, err := o.tool.answer(o.Out)
	if err != nil {
		return nil, fmt.Errorf("marshal output of %s: %w", o.Tool, err)
	}
	res.StructuredContent = structured
	res.Content = []mcp.Content{&mcp.TextContent{Text: string(text)}}
	if err := linkLarge(ctx, env, o.Tool, res, text); err != nil {
		return nil, err
	}
	return res, nil
}

// answerJSON is how a built-in tool's output is sent: its JSON, keys
// sorted, as structured content and as text.
func answerJSON(out any) ([]byte, any, error) {
	b, err := outputJSON(out)
	return b, Marshalled(b), err
}

// Marshalled is JSON as outputJSON writes it: compact, escaped as
// domain.MarshalPlain escapes. It marshals as itself, so json.Marshal writes
// it exactly as it would a json.RawMessage, and a writer that sees the
// type may copy it instead of compacting it once more (server's direct
// calls: a third of a short read's answer).
type Marshalled []byte

// MarshalJSON is m.
func (m Marshalled) MarshalJSON() ([]byte, error) { return m, nil }

// callThrough is the go-sdk's way into Call: every tools/call goes
// through Call here, and the go-sdk answers what Call made. A call that
// reached its tool goes on to the tool's go-sdk handler (answered), which
// hands back Call's answer, so the go-sdk finishes it as it finishes any
// handler's result; one the grant or the gate answered is answered here.
// A name Call knows nothing of goes on to the go-sdk, which answers an
// unknown tool as it always has.
func callThrough(env *Env, granted []string) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "tools/call" {
				return next(ctx, method, req)
			}
			p := req.GetParams().(*mcp.CallToolParamsRaw)
			o := Call(ctx, env, granted, p.Name, p.Arguments)
			if o.unknown {
				return next(ctx, method, req)
			}
			res, err := o.Result(ctx, env)
			if !o.Reached {
				return res, err
			}
			return next(context.WithValue(ctx, answerKey{}, answer{res, err}), method, req)
		}
	}
}

type answerKey struct{}

type answer struct {
	res *mcp.CallToolResult
	err error
}

// answered is every tool's go-sdk handler: it hands back what Call made
// in callThrough.
func answered(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	a, ok := ctx.Value(answerKey{}).(answer)
	if !ok {
		return nil, fmt.Errorf("tool %s was called without tools.Call", req.Params.Name)
	}
	return a.res, a.err
}
