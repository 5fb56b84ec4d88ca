package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
)

type dmIn struct {
	To string `json:"to"`
	envelope
}

type dmOut struct {
	Stream string       `json:"stream"`
	Event  domain.Event `json:"event"`
}

func dm() Tool {
	return define("dm", "Message a Worker directly.",
		func(ctx context.Context, env *Env, in dmIn) (dmOut, error) {
			if in.To == "" {
				return dmOut{}, domain.Required("to")
			}
			// The store checks every message; checking here too, with the
			// same rule, keeps a bad message from leaving a new DM stream behind.
			if err := in.envelope.message(env.Caller).Validate(maxBody(ctx, env)); err != nil {
				return dmOut{}, err
			}
			st, err := env.Store.EnsureDM(ctx, env.Caller, in.To)
			if err != nil {
				return dmOut{}, err
			}
			if len(in.envelope.To) == 0 {
				in.envelope.To = []string{in.To}
			}
			ev, err := appendMessage(ctx, env, st.ID, in.envelope)
			return dmOut{Stream: st.ID, Event: ev}, err
		})
}
