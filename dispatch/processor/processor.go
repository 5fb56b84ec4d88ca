package processor

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/helixml/helix-org/domain"
)

// Kind is one kind of processor: its name, what it does, the config it
// takes, and how a definition of it compiles.
type Kind struct {
	Name   domain.ProcessorKind
	About  string
	Config string
	// compile checks and compiles a config; outputs are the streams the
	// caller named. It returns the run function and the streams it writes.
	compile func(config json.RawMessage, outputs []string) (runFunc, []string, error)
}

// runFunc makes the messages of one input event.
type runFunc func(in view) ([]domain.ProcessorOutput, error)

// Kinds is the one list of processor kinds, in the order they are offered.
var Kinds = []Kind{filterKind, routeKind, transformKind, templateKind, truncateKind}

// Names lists the kinds' names, for enums and errors.
func Names() []domain.ProcessorKind {
	var out []domain.ProcessorKind
	for _, k := range Kinds {
		out = append(out, k.Name)
	}
	return out
}

// Lookup returns the named kind.
func Lookup(name domain.ProcessorKind) (Kind, error) {
	i := slices.IndexFunc(Kinds, func(k Kind) bool { return k.Name == name })
	if i < 0 {
		return Kind{}, domain.EnumError("kind", "processor kind", name, Names())
	}
	return Kinds[i], nil
}

// Program is a compiled processor.
type Program struct {
	p   domain.Processor
	run runFunc
	// Outputs are the streams it writes to, sorted.
	Outputs []string
}

// Compile checks p's config against its kind and compiles it. A route's
// outputs follow from its routes: outputs may then be empty, and if given
// must name the same streams.
func Compile(p domain.Processor) (*Program, error) {
	k, err := Lookup(p.Kind)
	if err != nil {
		return nil, err
	}
	run, outputs, err := k.compile(p.Config, p.Outputs)
	if err != nil {
		return nil, err
	}
	outputs = domain.SortedOutputs(outputs)
	if len(p.Outputs) > 0 && !slices.Equal(domain.SortedOutputs(p.Outputs), outputs) {
		return nil, domain.Invalid("outputs", "names %v but the config writes to %v; leave outputs out or name the same streams", domain.SortedOutputs(p.Outputs), outputs)
	}
	return &Program{p: p, run: run, Outputs: outputs}, nil
}

// Input is an event as a processor sees it: the event and the transport
// kind of the stream it is on (source.kind in an expression).
type Input struct {
	Event      domain.Event
	StreamKind domain.TransportKind
}

// Run makes the messages in's event becomes on the outputs: none when a
// filter or a route without a default drops it. An error is the
// processor's own (an expression failed, or went over its cost limit) and
// says so in words; running it again over the same event fails the same.
func (pr *Program) Run(in Input) ([]domain.ProcessorOutput, error) {
	v, err := newView(in)
	if err != nil {
		return nil, err
	}
	return pr.run(v)
}

// decodeConfig reads a kind's config strictly: an unknown field is an
// error naming it, not a setting silently ignored.
func decodeConfig(raw json.RawMessage, into any, shape string) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		return domain.Invalid("config", "is required: %s", shape)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil {
		return domain.Invalid("config", "must be %s: %v", shape, err)
	}
	return nil
}

// oneOutput is the single stream of a kind that writes to one.
func oneOutput(outputs []string) ([]string, error) {
	if len(outputs) != 1 {
		return nil, domain.Invalid("outputs", "names %d streams; this kind writes to exactly one", len(outputs))
	}
	return outputs, nil
}

// to is msg bound for stream.
func to(stream string, msg domain.Message) []domain.ProcessorOutput {
	return []domain.ProcessorOutput{{Stream: stream, Message: msg}}
}
