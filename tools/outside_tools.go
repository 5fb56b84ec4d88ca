package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/domain"
)

// Outside reaches the outside MCP servers the org attached (the gateway
// package); nil when the server reaches none.
type Outside interface {
	// Call calls a server's tool; an error is the server's failure
	// (down, hung past its timeout, dead), never the tool's own.
	Call(ctx context.Context, server, tool string, args json.RawMessage) (*mcp.CallToolResult, error)
	// Refresh connects anew and fetches the server's tool list.
	Refresh(ctx context.Context, server string) (domain.MCPServer, error)
	// Forget ends the session to a removed server.
	Forget(server string)
}

// errNoOutside explains why outside tools cannot be called here.
var errNoOutside = errors.New("outside MCP servers are not reachable from this server (it was started without a gateway)")

// OutsideKey changes whenever the outside tools a server offers would, so
// a cached per-worker server and tools/list are rebuilt.
func OutsideKey(outside []domain.OutsideTool) string {
	var b strings.Builder
	for _, o := range outside {
		fmt.Fprintf(&b, "%s/%d/%d/%t,", o.ToolName(), len(o.Description), len(o.InputSchema)+len(o.Annotations), o.Trusted)
	}
	return b.String()
}

// Outsiders offers <server>__<tool> for each outside tool among granted.
func Outsiders(outside []domain.OutsideTool, granted []string) []Offer {
	var out []Offer
	for _, o := range outside {
		if slices.Contains(granted, o.ToolName()) {
			out = append(out, Offer{Def: outsideDef(o)})
		}
	}
	return out
}

// outsideDef is an outside tool as clients are shown it: the server's own
// description, schema and hints, under its grantable name. A schema that
// is not an object (which the protocol requires) is shown as any object.
func outsideDef(o domain.OutsideTool) *mcp.Tool {
	schema := o.InputSchema
	var probe struct {
		Type any `json:"type"`
	}
	if json.Unmarshal(schema, &probe) != nil || probe.Type != "object" {
		schema = json.RawMessage(`{"type":"object"}`)
	}
	ann := &mcp.ToolAnnotations{}
	if len(o.Annotations) > 0 {
		json.Unmarshal(o.Annotations, ann)
	}
	title := cmpOr(o.Title, o.Name)
	ann.Title = title
	return &mcp.Tool{Name: o.ToolName(), Title: title, InputSchema: schema, Annotations: ann,
		Description: strings.TrimSpace(o.Description + " (from outside MCP server " + o.Server + ")")}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// addOutsideTools adds <server>__<tool> for each outside tool the worker
// is granted.
func addOutsideTools(srv *mcp.Server, env *Env, granted []string) {
	for _, o := range env.OutsideTools {
		if slices.Contains(granted, o.ToolName()) {
			t := outsideTool(o)
			srv.AddTool(t.def, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return callOutside(ctx, env, o, t, req.Params.Arguments)
			})
		}
	}
}

// outsideTool is an outside tool as the gate sees a tool: its name and the
// schema its arguments are checked against (the server's own, or any
// object when it does not resolve: the server then judges them).
func outsideTool(o domain.OutsideTool) Tool {
	def := outsideDef(o)
	resolved, err := resolveSchema(def.InputSchema.(json.RawMessage))
	if err != nil {
		resolved, _ = resolveSchema(json.RawMessage(`{"type":"object"}`))
	}
	return Tool{Name: def.Name, Title: def.Title, Description: def.Description, def: def,
		input: func() (*jsonschema.Resolved, error) { return resolved, nil }}
}

// callOutside runs one call of an outside tool as a built-in's runs:
// the approval gate, the arguments checked, then the server through the
// gateway. What the server answers carries its label — untrusted unless
// the server is marked trusted — which raises the caller's run's. A
// server that fails answers a tool error, so the run goes on.
func callOutside(ctx context.Context, env *Env, o domain.OutsideTool, t Tool, raw json.RawMessage) (*mcp.CallToolResult, error) {
	ctx, held, args := gateResult(ctx, env, t, raw)
	if held != nil {
		return held, nil
	}
	failed := func(err error) (*mcp.CallToolResult, error) {
		res := &mcp.CallToolResult{}
		res.SetError(err)
		return res, nil
	}
	args, err := checkArgs(t.Name, t.input, args)
	if err != nil {
		return failed(err)
	}
	if env.Outside == nil {
		return failed(errNoOutside)
	}
	res, err := env.Outside.Call(ctx, o.Server, o.Name, args)
	if err != nil {
		return failed(err)
	}
	if err := env.saw(ctx, outsideLabel(o)); err != nil {
		return nil, err
	}
	text, _ := json.Marshal(res.Content)
	if err := linkLarge(ctx, env, t.Name, res, text); err != nil {
		return nil, err
	}
	return res, nil
}

// outsideLabel is what a result of o carries.
func outsideLabel(o domain.OutsideTool) domain.Label {
	if o.Trusted {
		return domain.Label{}
	}
	return domain.Untrusted(fmt.Sprintf("mcp server %s tool %s", o.Server, o.Name))
}

// outsideWrites reports whether tool is an outside tool its server did
// not annotate read-only: in a run that read untrusted data it is
// high-risk, as the tools of approvals.high_risk are.
func outsideWrites(env *Env, tool string) bool {
	i := slices.IndexFunc(env.OutsideTools, func(o domain.OutsideTool) bool { return o.ToolName() == tool })
	return i >= 0 && !env.OutsideTools[i].ReadOnly()
}
