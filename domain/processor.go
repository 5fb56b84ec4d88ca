package domain

import (
	"encoding/json"
	"slices"
	"strings"
	"time"
)

// PrefixProcessor starts every processor id.
const PrefixProcessor = "proc-"

// Limits of a processor's definition.
const (
	// MaxProcessorOutputs bounds the streams one processor writes to (a
	// route's routes and default).
	MaxProcessorOutputs = 32
	// MaxProcessorConfig bounds a processor's config, in bytes.
	MaxProcessorConfig = 16 << 10
)

// ProcessorKind names what a processor does with each event of its
// input; the kinds themselves live in dispatch/processor.
type ProcessorKind string

// Processor runs in the server between streams: each event of Input is
// handed to it, and what it makes of it (none, one or more messages) is
// appended to its Outputs as new events that carry the input's label and
// name the input event (CausedBy). AI subscribers of an output wake only
// for what the processor lets through, so a busy stream costs no model
// calls for what a rule can drop.
type Processor struct {
	ID     string          `json:"id"`
	Input  string          `json:"input"`
	Kind   ProcessorKind   `json:"kind"`
	Config json.RawMessage `json:"config,omitempty"`
	// Outputs are the streams it may write to, sorted.
	Outputs   []string  `json:"outputs"`
	CreatedBy string    `json:"createdBy,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
	// Label is what its creator's run had read when it wrote the
	// definition: every output carries it too.
	Label Label `json:"label,omitzero"`
	// Counts of the input events it has handled and failed on, and the
	// last failure's reason.
	Processed int64  `json:"processed"`
	Pending   int64  `json:"pending,omitempty"`
	Failed    int64  `json:"failed,omitempty"`
	LastError string `json:"lastError,omitempty"`
}

// Validate checks the fields every kind shares; a kind checks its config.
func (p Processor) Validate() error {
	if p.ID != "" {
		if err := ValidateID("id", PrefixProcessor, p.ID); err != nil {
			return err
		}
	}
	if strings.TrimSpace(p.Input) == "" {
		return Required("input")
	}
	if err := ValidateID("input", PrefixStream, p.Input); err != nil {
		return err
	}
	if len(p.Outputs) == 0 {
		return Required("outputs")
	}
	if len(p.Outputs) > MaxProcessorOutputs {
		return Invalid("outputs", "names %d streams; the limit is %d", len(p.Outputs), MaxProcessorOutputs)
	}
	for i, o := range p.Outputs {
		if err := ValidateID(indexed("outputs", i), PrefixStream, o); err != nil {
			return err
		}
		if o == p.Input {
			return Invalid(indexed("outputs", i), "%s is the processor's input; a processor writing to its own input would run forever", o)
		}
	}
	if len(p.Config) > MaxProcessorConfig {
		return Invalid("config", "is %d bytes; the limit is %d", len(p.Config), MaxProcessorConfig)
	}
	return nil
}

// SortedOutputs returns outputs sorted and without repeats.
func SortedOutputs(outputs []string) []string {
	out := slices.Clone(outputs)
	slices.Sort(out)
	return slices.Compact(out)
}

// ProcessorOutput is one message a processor made of an input event, for
// one of its outputs.
type ProcessorOutput struct {
	Stream  string  `json:"stream"`
	Message Message `json:"message"`
}
