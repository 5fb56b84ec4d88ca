package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/helixml/helix-org/dispatch/processor"
	"github.com/helixml/helix-org/domain"
)

// processorSpec is a processor's definition as a caller writes it.
type processorSpec struct {
	Input   string          `json:"input" jsonschema:"the stream whose events it processes (s-…)"`
	Kind    string          `json:"kind" jsonschema:"what it does with each event"`
	Config  json.RawMessage `json:"config" jsonschema:"the kind's settings"`
	Outputs []string        `json:"outputs,omitempty" jsonschema:"the streams it writes to (s-…), created as local streams when missing: one for filter, transform, template and truncate; a route's follow from its routes and may be left out"`
}

func (s processorSpec) processor(id string) domain.Processor {
	return domain.Processor{ID: id, Input: s.Input, Kind: domain.ProcessorKind(s.Kind), Config: s.Config, Outputs: s.Outputs}
}

// compile checks the definition and returns it with its outputs as the
// kind decides them (a route's from its routes).
func (s processorSpec) compile(id string) (domain.Processor, *processor.Program, error) {
	p := s.processor(id)
	if p.Input == "" {
		return p, nil, domain.Required("input")
	}
	if p.Kind == "" {
		return p, nil, domain.Required("kind")
	}
	prg, err := processor.Compile(p)
	if err != nil {
		return p, nil, err
	}
	p.Outputs = prg.Outputs
	return p, prg, nil
}

type createProcessorIn struct {
	ID string `json:"id,omitempty" jsonschema:"the new processor's id (proc-…); by default derived from its kind and input"`
	processorSpec
}

func createProcessor() Tool {
	return define("create_processor", "Create a processor between streams: it runs in the server over every new event of its input stream and writes what it makes to its output streams — a filter or route that drops or sorts events by a CEL condition, a transform or template that rewrites them, a truncate — so subscribers of an output wake only for what passes. Try it first with preview_processor.",
		func(ctx context.Context, env *Env, in createProcessorIn) (domain.Processor, error) {
			p, _, err := in.compile(in.ID)
			if err != nil {
				return domain.Processor{}, err
			}
			return env.Store.CreateProcessor(ctx, env.Caller, p)
		}, enum("kind", processor.Names()), asObject("config"), describeConfig).annotated("Create processor", adds)
}

// describeConfig says, in config's description, what each kind takes:
// the kinds' own words, from their list.
func describeConfig(s *jsonschema.Schema) {
	p := propSchema(s, "config")
	var b strings.Builder
	b.WriteString(p.Description + ", by kind. CEL expressions see message (from, to, subject, body, threadId, messageId, extra), source (kind, stream, worker, type) and label (untrusted, origin, readers):")
	for _, k := range processor.Kinds {
		fmt.Fprintf(&b, " %s %s;", k.Name, k.Config)
	}
	p.Description = strings.TrimSuffix(b.String(), ";")
}
