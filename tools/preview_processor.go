package tools

import (
	"cmp"
	"context"
	"slices"

	"github.com/helixml/helix-org/dispatch/processor"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

type previewProcessorIn struct {
	ID   string         `json:"id,omitempty" jsonschema:"a processor to preview (proc-…); or give spec instead"`
	Spec *processorSpec `json:"spec,omitempty" jsonschema:"a definition to try before creating it, as create_processor takes it"`
	Last int            `json:"last,omitempty" jsonschema:"how many of the input's latest events to run it over; default 20, at most 100"`
}

type previewEvent struct {
	Event   string                   `json:"event" jsonschema:"the input event (e-…)"`
	Subject string                   `json:"subject,omitempty" jsonschema:"its subject"`
	Outputs []domain.ProcessorOutput `json:"outputs" jsonschema:"what the processor would write for it: none when it drops the event"`
	Error   string                   `json:"error,omitempty" jsonschema:"why the processor fails on it"`
}

type previewProcessorOut struct {
	Input   string         `json:"input"`
	Events  []previewEvent `json:"events"`
	Passed  int            `json:"passed"`
	Dropped int            `json:"dropped"`
	Failed  int            `json:"failed"`
}

const (
	defaultPreview = 20
	maxPreview     = 100
)

func previewProcessor() Tool {
	return define("preview_processor", "Run a processor — a stored one or a definition — over the latest events of its input and show what it would write for each, without writing anything.",
		func(ctx context.Context, env *Env, in previewProcessorIn) (previewProcessorOut, error) {
			p, prg, err := previewed(ctx, env, in)
			if err != nil {
				return previewProcessorOut{}, err
			}
			if in.Last < 0 || in.Last > maxPreview {
				return previewProcessorOut{}, domain.Invalid("last", "is %d; it must be 1 to %d", in.Last, maxPreview)
			}
			evs, kind, err := latest(ctx, env, p.Input, cmp.Or(in.Last, defaultPreview))
			if err != nil {
				return previewProcessorOut{}, err
			}
			out := previewProcessorOut{Input: p.Input, Events: []previewEvent{}}
			for _, ev := range evs {
				pe := previewEvent{Event: ev.ID, Subject: ev.Message.Subject, Outputs: []domain.ProcessorOutput{}}
				outs, err := prg.Run(processor.Input{Event: ev, StreamKind: kind})
				switch {
				case err != nil:
					pe.Error = err.Error()
					out.Failed++
				case len(outs) == 0:
					out.Dropped++
				default:
					pe.Outputs = outs
					out.Passed++
				}
				out.Events = append(out.Events, pe)
			}
			return out, nil
		}).annotated("Preview processor", readOnly|idempotent)
}

// previewed is the processor a preview runs: the stored one or the spec.
func previewed(ctx context.Context, env *Env, in previewProcessorIn) (domain.Processor, *processor.Program, error) {
	switch {
	case (in.ID == "") == (in.Spec == nil):
		return domain.Processor{}, nil, domain.Invalid("id", "give either id, a stored processor, or spec, a definition to try")
	case in.Spec != nil:
		return in.Spec.compile("")
	}
	p, err := env.Store.GetProcessor(ctx, in.ID)
	if err != nil {
		return p, nil, err
	}
	prg, err := processor.Compile(p)
	return p, prg, err
}

// latest reads the last n events of stream, oldest first, which the
// caller must be allowed to read; the run that reads them sees them.
func latest(ctx context.Context, env *Env, stream string, n int) ([]domain.Event, domain.TransportKind, error) {
	st, err := env.Store.GetStream(ctx, stream)
	if err != nil {
		return nil, "", err
	}
	if err := env.Store.CheckReads(ctx, env.Caller, stream); err != nil {
		return nil, "", err
	}
	readers, err := env.Store.StreamReaders(ctx, stream)
	if err != nil {
		return nil, "", err
	}
	if readers != nil && env.Caller != "" && !slices.Contains(readers, env.Caller) {
		return nil, "", domain.Forbidden("%s is read only by its members; %s is not one", stream, env.Caller)
	}
	evs, err := env.Store.EventsBefore(ctx, store.PageQuery{StreamIDs: []string{stream}, Limit: n})
	if err != nil {
		return nil, "", err
	}
	slices.Reverse(evs)
	return evs, st.Transport.Kind, env.sawEvents(ctx, evs)
}
