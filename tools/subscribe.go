package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
)

type subscribeIn struct {
	Stream string `json:"stream" jsonschema:"the stream id"`
	Worker string `json:"worker,omitempty" jsonschema:"the worker; yourself when omitted"`
}

type subscribeOut struct {
	Stream  string `json:"stream"`
	Worker  string `json:"worker"`
	Changed bool   `json:"changed" jsonschema:"false when nothing needed doing"`
}

func subscribe() Tool {
	return define("subscribe", "Subscribe a Worker (yourself by default, or one below you in the org chart) to a Stream, so its events reach them. Idempotent. s-org is the owner's alone, an activation log its worker's and those above it, a DM its two members' (who may rejoin it).",
		func(ctx context.Context, env *Env, in subscribeIn) (subscribeOut, error) {
			if in.Stream == "" {
				return subscribeOut{}, domain.Required("stream")
			}
			if in.Worker == "" {
				in.Worker = env.Caller
			}
			added, err := env.Store.Subscribe(ctx, env.Caller, in.Stream, in.Worker)
			return subscribeOut{Stream: in.Stream, Worker: in.Worker, Changed: len(added) > 0}, err
		})
}
