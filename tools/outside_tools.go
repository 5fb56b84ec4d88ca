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
	"github.com/helixml/helix-org/store"
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
// is granted; its calls run through Call (lookup finds them).
func addOutsideTools(srv *mcp.Server, env *Env, granted []string) {
	for _, o := range env.OutsideTools {
		if slices.Contains(granted, o.ToolName()) {
			srv.AddTool(outsideDef(o), answered)
		}
	}
}

// outsideTool is <server>__<tool> as Call runs it: its arguments checked
// against the server's own schema (or any object, when that does not
// resolve: the server then judges them), then the server called through
// the gateway. What the server answers carries its label — untrusted
// unless the server is marked trusted — which raises the caller's run's.
// A server that fails, or a tool error it answers, is the call's error,
// so the run goes on.
func outsideTool(env *Env, name string) (Tool, bool) {
	i := slices.IndexFunc(env.OutsideTools, func(o domain.OutsideTool) bool { return o.ToolName() == name })
	if i < 0 {
		return Tool{}, false
	}
	o := env.OutsideTools[i]
	def := outsideDef(o)
	resolved, err := resolveSchema(def.InputSchema.(json.RawMessage))
	if err != nil {
		resolved, _ = resolveSchema(json.RawMessage(`{"type":"object"}`))
	}
	input := func() (*jsonschema.Resolved, error) { return resolved, nil }
	return Tool{Name: name, Title: def.Title, Description: def.Description, def: fixed(def), input: input,
		check: func(args json.RawMessage) (json.RawMessage, error) { return checkArgs(name, input, args) },
		call: func(ctx context.Context, env *Env, args json.RawMessage) (any, error) {
			return callOutside(ctx, env, o, args)
		},
		answer: func(out any) ([]byte, any, error) {
			res := out.(*mcp.CallToolResult)
			return []byte(contentText(res)), res.StructuredContent, nil
		}}, true
}

func callOutside(ctx context.Context, env *Env, o domain.OutsideTool, args json.RawMessage) (*mcp.CallToolResult, error) {
	if env.Outside == nil {
		return nil, errNoOutside
	}
	call, err := outsideCallOf(ctx, env, o)
	if err != nil {
		return nil, err
	}
	if err := env.Store.AdmitOutsideCall(ctx, call); err != nil {
		return nil, err
	}
	res, err := env.Outside.Call(ctx, o.Server, o.Name, args)
	if err != nil {
		return nil, err
	}
	// The server answered, so the call counts, a tool error included; a
	// budget it takes to its limit stops the next call, not this one.
	if _, err := env.Store.RecordOutsideCall(ctx, call); err != nil {
		return nil, err
	}
	if err := env.saw(ctx, outsideLabel(o)); err != nil {
		return nil, err
	}
	if res.IsError {
		return nil, fmt.Errorf("%s answered an error: %s", o.ToolName(), contentText(res))
	}
	return res, nil
}

// outsideCallOf is a call of o by env's caller as the ledger keeps it,
// priced by mcp.prices as it stands now.
func outsideCallOf(ctx context.Context, env *Env, o domain.OutsideTool) (store.OutsideCall, error) {
	raw, err := env.Store.SettingOr(ctx, domain.MCPPricesSetting)
	if err != nil {
		return store.OutsideCall{}, fmt.Errorf("read mcp.prices: %w", err)
	}
	prices, err := domain.ParseMCPPrices(raw)
	if err != nil {
		return store.OutsideCall{}, err
	}
	cost, _ := prices.Of(o.ToolName())
	return store.OutsideCall{Activation: env.ActivationID, Worker: env.Caller, Tool: o.ToolName(), Cost: cost}, nil
}

// contentText is a result's text content; other content (images,
// resources) as its JSON.
func contentText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
			continue
		}
		raw, _ := json.Marshal(c)
		b.Write(raw)
	}
	return b.String()
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
