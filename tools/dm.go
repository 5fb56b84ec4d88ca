package tools

import (
	"context"
	"strings"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

type dmIn struct {
	To string `json:"to" jsonschema:"who to message: a worker (w-…), or a position (p-…) for the one worker holding it"`
	envelope
}

type dmOut struct {
	Stream string       `json:"stream"`
	Event  domain.Event `json:"event"`
}

func dm() Tool {
	return define("dm", "Send a direct message to a Worker, or to the one Worker holding a Position, on the stream the two of you share.",
		func(ctx context.Context, env *Env, in dmIn) (dmOut, error) {
			if in.To == "" {
				return dmOut{}, domain.Required("to")
			}
			// The store checks every message; checking here too, with the
			// same rule, keeps a bad message from leaving a new DM stream behind.
			if err := in.envelope.message(env.Caller).Validate(maxBody(ctx, env)); err != nil {
				return dmOut{}, err
			}
			to, err := holder(ctx, env, "to", in.To)
			if err != nil {
				return dmOut{}, err
			}
			st, err := env.Store.EnsureDM(ctx, env.Caller, to)
			if err != nil {
				return dmOut{}, err
			}
			if len(in.envelope.To) == 0 {
				in.envelope.To = []string{in.To}
			}
			ev, err := appendMessage(ctx, env, st.ID, in.envelope)
			return dmOut{Stream: st.ID, Event: ev}, err
		}).annotated("Direct message", openWorld).inCore(3)
}

// holder is the worker a DM to id goes to: id itself, or the one worker
// holding position id — so a colleague writes to a position the same way
// whether an AI or a human holds it, and whoever holds it next.
func holder(ctx context.Context, env *Env, field, id string) (string, error) {
	if !strings.HasPrefix(id, domain.PrefixPosition) {
		return id, nil
	}
	if _, err := env.Store.GetPosition(ctx, id); err != nil {
		return "", err
	}
	ws, err := env.Store.ListWorkers(ctx, store.WorkerFilter{PositionID: id})
	if err != nil {
		return "", err
	}
	switch len(ws) {
	case 0:
		return "", domain.Invalid(field, "position %s has no worker to message", id)
	case 1:
		return ws[0].ID, nil
	}
	ids := make([]string, len(ws))
	for i, w := range ws {
		ids[i] = w.ID
	}
	return "", domain.Invalid(field, "position %s has %d workers (%s): message one of them", id, len(ws), strings.Join(ids, ", "))
}
