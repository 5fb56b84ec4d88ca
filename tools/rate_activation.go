package tools

import (
	"context"
	"time"

	"github.com/helixml/helix-org/domain"
)

type rateActivationIn struct {
	Activation string `json:"activation" jsonschema:"the run to rate: an activation id (a-…) of a worker below you"`
	Outcome    string `json:"outcome" jsonschema:"how the run went, as you judge it"`
	Note       string `json:"note,omitempty" jsonschema:"why, kept with the rating"`
}

type rateActivationOut struct {
	Activation string    `json:"activation"`
	Outcome    string    `json:"outcome" jsonschema:"what now credits the insights the run cited: helped or failed"`
	Source     string    `json:"source"`
	By         string    `json:"by"`
	Note       string    `json:"note,omitempty"`
	At         time.Time `json:"at"`
	Proposed   string    `json:"proposed,omitempty" jsonschema:"the pattern insight proposed from the note of a run rated succeeded, quarantined until a person confirms it with endorse_insight"`
}

func rateActivation() Tool {
	return define("rate_activation", "Rate how a run of a worker below you went; the rating overrides the run's own end and credits the insights it cited. People only.",
		func(ctx context.Context, env *Env, in rateActivationIn) (rateActivationOut, error) {
			if in.Activation == "" {
				return rateActivationOut{}, domain.Required("activation")
			}
			o, err := env.Store.RateActivation(ctx, env.Caller, in.Activation, in.Outcome, in.Note)
			if err != nil {
				return rateActivationOut{}, err
			}
			return rateActivationOut{Activation: o.Activation, Outcome: string(o.Outcome), Source: string(o.Source), By: o.By, Note: o.Note, At: o.At, Proposed: o.Proposed}, nil
		}, enum("outcome", domain.RunRatings)).annotated("Rate run", destructive|idempotent)
}
