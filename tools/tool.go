package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// Env is what a handler works with: the store and the authenticated caller.
type Env struct {
	Store *store.Store
	// Caller is the worker whose endpoint the call arrived on.
	Caller string
	// Known lists every tool name, for validating grants.
	Known []string
	// ActivationID is set when the caller is an agent run, so events it
	// publishes carry causedBy.
	ActivationID string
	// Skills runs skills; nil when the server has no Docker.
	Skills SkillRunner
	// SkillDefs are the skills; each callable one is served as
	// skill_<name> to workers granted it.
	SkillDefs []domain.Skill
	// Logger hears what a tool does not fail for (a push that did not
	// go through); nil discards it.
	Logger *slog.Logger
	// ApprovalRequired, when set, says whether the caller's grant of a
	// tool requires approval, from the grants read when the request was
	// authenticated; unset, the store is asked.
	ApprovalRequired func(tool string) bool
	// Catalog is the caller's tools as its tools/list shows them and
	// find_tools searches them; nil shows every granted tool.
	Catalog *Catalog
	// Outside reaches outside MCP servers; nil when none can be.
	Outside Outside
	// OutsideTools are the tools of every outside server; each is served
	// as <server>__<tool> to workers granted it.
	OutsideTools []domain.OutsideTool
	// Draining is closed once the org stops serving (the server shuts
	// down, or the org is archived): a wait answers at once with what it
	// has rather than hold the request open. Nil never closes.
	Draining <-chan struct{}
	// Root is the path the caller's org is served under, /orgs/<name>,
	// or "" for the default org: links a tool gives people start with it.
	Root string
	// approved is the approval a call runs under, past the gate
	// (runAsRequester); nil for every other call.
	approved *domain.Approval
}

// saw raises the caller's run's label by l, what a result the run is
// about to receive carries: every handler that returns labelled data
// calls it, so a run's label is the join of everything it has read.
// A person's calls are not tracked: people are not steered by text.
func (e *Env) saw(ctx context.Context, l domain.Label) error {
	if e.ActivationID == "" || l.IsZero() {
		return nil
	}
	_, err := e.Store.RaiseLabel(ctx, e.ActivationID, l)
	return err
}

// sawEvents is saw for events read, each narrowed by its stream's readers.
func (e *Env) sawEvents(ctx context.Context, evs []domain.Event) error {
	if e.ActivationID == "" || len(evs) == 0 {
		return nil
	}
	l, err := e.Store.LabelOfEvents(ctx, evs)
	if err != nil {
		return err
	}
	return e.saw(ctx, l)
}

func (e *Env) logger() *slog.Logger {
	if e.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return e.Logger
}

// Tool is one MCP tool: its definition plus a way to bind it to a server.
type Tool struct {
	Name        string
	Title       string
	Description string
	// core places the tool in the compact core a worker with many grants
	// is shown beside find_tools, 1 first; 0 leaves it to be found.
	core int
	// def is built once, on first use: schemas are inferred from the Go
	// types, which for every tool at once is most of a cold start's first
	// call, though a call needs one tool's.
	def func() *mcp.Tool
	// shown is the input schema def shows, before transports complete it.
	shown func() *jsonschema.Schema
	// forTransports, when set, completes the input schema with what the
	// store's transport kinds offer (enums, config docs); see defFor.
	forTransports func(ts *domain.Transports, in *jsonschema.Schema)
	defs          *sync.Map // *domain.Transports → *mcp.Tool
	// call decodes raw JSON arguments and runs the typed handler without a
	// server, so in-package tests exercise handlers directly.
	call func(ctx context.Context, env *Env, args json.RawMessage) (any, error)
	// input is the resolved input schema, which check checks arguments
	// against as the SDK does before a tools/call reaches the handler.
	input func() (*jsonschema.Resolved, error)
	// check validates a call's arguments (Call, step 4) and returns them
	// as the handler takes them.
	check func(args json.RawMessage) (json.RawMessage, error)
	// answer turns the handler's output into a tools/call's text and
	// structured content.
	answer func(out any) (text []byte, structured any, err error)
	// hints are what annotated declared, readable without building def.
	hints hint
	// given: called without a grant and past the gate (find_tools, which
	// comes with a searched catalog and reads only the caller's grants).
	given bool
}

// bind adds the tool to srv as def; its calls run through Call
// (callThrough), and the go-sdk handler only hands back the answer.
func (t Tool) bind(srv *mcp.Server, def *mcp.Tool) { srv.AddTool(def, answered) }

// Def returns the MCP definition (name, description, schemas) as offered
// with the transport kinds ts.
func (t Tool) Def(ts *domain.Transports) *mcp.Tool {
	if t.forTransports == nil {
		return t.def()
	}
	if d, ok := t.defs.Load(ts); ok {
		return d.(*mcp.Tool)
	}
	def := *t.def()
	in := t.shown().CloneSchemas()
	t.forTransports(ts, in)
	def.InputSchema = shown(in)
	d, _ := t.defs.LoadOrStore(ts, &def)
	return d.(*mcp.Tool)
}

// hint is one of the annotations a tool declares about what a call does;
// a tool has the hints it names and every other is false. Clients act on
// them — one may run a read-only tool without asking, or warn before a
// destructive one — so each tool states all four, not the protocol's
// defaults (destructive and open-world when unsaid).
type hint uint8

const (
	// readOnly: a call changes nothing a caller can see.
	readOnly hint = 1 << iota
	// destructive: a call may remove or overwrite what is there, not only add.
	destructive
	// idempotent: the same call again changes nothing more.
	idempotent
	// openWorld: a call may reach beyond helix-org — send to a person or
	// system outside, or fetch from or push to one.
	openWorld
	// adds is none of them: a call adds to the org, and the same call
	// again adds again.
	adds hint = 0
)

// annotated gives the tool its title and hints; every tool in All has
// them (TestEveryToolIsAnnotated).
func (t Tool) annotated(title string, h hint) Tool {
	t.Title = title
	def := t.def
	t.def = sync.OnceValue(func() *mcp.Tool {
		d := def()
		d.Title = title
		d.Annotations = &mcp.ToolAnnotations{Title: title, ReadOnlyHint: h&readOnly != 0, DestructiveHint: new(h&destructive != 0),
			IdempotentHint: h&idempotent != 0, OpenWorldHint: new(h&openWorld != 0)}
		return d
	})
	t.hints = h
	return t
}

// inCore puts the tool in the compact core at rank (1 first): the tools
// nearly every worker needs on nearly every run, shown to a worker whose
// grants are too many to show whole (Catalog). As many as the context
// budget holds are shown, in rank order.
func (t Tool) inCore(rank int) Tool {
	t.core = rank
	return t
}

// answeredBy has the tool's output answered by answer instead of
// answerJSON; answer writes the same bytes, only faster.
func (t Tool) answeredBy(answer func(out any) ([]byte, any, error)) Tool {
	t.answer = answer
	return t
}

// withTransports makes the tool's schema list the store's transport kinds.
func (t Tool) withTransports(f func(ts *domain.Transports, in *jsonschema.Schema)) Tool {
	t.forTransports, t.defs = f, &sync.Map{}
	return t
}

// schemaOptions maps types the inferrer cannot express to JSON Schema:
// raw JSON is any JSON value (anyJSON), times are RFC 3339 strings.
var schemaOptions = &jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[json.RawMessage](): anyJSON(),
	reflect.TypeFor[time.Time]():       {Type: "string", Format: "date-time"},
}}

// define builds a Tool from a typed handler. tweak may add enums or other
// detail the Go types cannot carry.
// The schemas are built on first use (TestEveryToolIsAnnotated builds
// them all, so a bad one fails a test, not a call).
func define[In, Out any](name, desc string, h func(ctx context.Context, env *Env, in In) (Out, error), tweak ...func(in *jsonschema.Schema)) Tool {
	input := sync.OnceValue(func() *jsonschema.Schema {
		in, err := jsonschema.For[In](schemaOptions)
		if err != nil {
			panic(fmt.Sprintf("tool %s: input schema: %v", name, err))
		}
		for _, f := range tweak {
			f(in)
		}
		return in
	})
	brief := sync.OnceValue(func() *jsonschema.Schema { return compact(input(), false) })
	def := sync.OnceValue(func() *mcp.Tool {
		out, err := jsonschema.For[Out](schemaOptions)
		if err != nil {
			panic(fmt.Sprintf("tool %s: output schema: %v", name, err))
		}
		return &mcp.Tool{Name: name, Description: desc, InputSchema: shown(brief()), OutputSchema: compact(out, true)}
	})
	resolved := sync.OnceValues(func() (*jsonschema.Resolved, error) {
		return input().Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
	})
	call := func(ctx context.Context, env *Env, args json.RawMessage) (any, error) {
		var in In
		if len(args) > 0 {
			if err := json.Unmarshal(args, &in); err != nil {
				return nil, fmt.Errorf("arguments of %s: %w", name, err)
			}
		}
		return h(ctx, env, in)
	}
	check := func(args json.RawMessage) (json.RawMessage, error) { return checkArgs(name, resolved, args) }
	return Tool{Name: name, Description: desc, def: def, shown: brief, input: resolved, call: call, check: check, answer: answerJSON}
}

// fixed is the def of a tool whose definition is data already (a
// skill's, an outside server's).
func fixed(def *mcp.Tool) func() *mcp.Tool {
	return func() *mcp.Tool { return def }
}

// outputJSON marshals a result with its object keys sorted, as the SDK's
// typed handlers send it: clients and tests read the same text either way.
func outputJSON(out any) ([]byte, error) {
	b, err := domain.MarshalPlain(out)
	if err != nil {
		return nil, err
	}
	if string(b) == "null" {
		return []byte("{}"), nil
	}
	return sortKeys(b)
}

// enum restricts a property to the given values and lists them in its
// description, so a client sees the choices without reading our code.
func enum[T ~string](prop string, values []T) func(*jsonschema.Schema) {
	return func(s *jsonschema.Schema) {
		p := propSchema(s, prop)
		if p == nil {
			panic("enum on unknown property " + prop)
		}
		p.Enum = nil
		for _, v := range values {
			p.Enum = append(p.Enum, string(v))
		}
	}
}

// propSchema finds a (possibly nested, dot-separated) property; a step
// into a list goes into its items ("examples.output").
func propSchema(s *jsonschema.Schema, path string) *jsonschema.Schema {
	for _, name := range splitDots(path) {
		if s != nil && s.Properties == nil {
			s = s.Items
		}
		if s == nil || s.Properties == nil {
			return nil
		}
		s = s.Properties[name]
	}
	return s
}

func splitDots(p string) []string {
	var out []string
	start := 0
	for i := 0; i < len(p); i++ {
		if p[i] == '.' {
			out = append(out, p[start:i])
			start = i + 1
		}
	}
	return append(out, p[start:])
}
