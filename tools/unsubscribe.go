package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
)

func unsubscribe() Tool {
	return define("unsubscribe", "Unsubscribe you, or a Worker below you, from a Stream.",
		func(ctx context.Context, env *Env, in subscribeIn) (subscribeOut, error) {
			if in.Stream == "" {
				return subscribeOut{}, domain.Required("stream")
			}
			if in.Worker == "" {
				in.Worker = env.Caller
			}
			err := env.Store.Unsubscribe(ctx, env.Caller, in.Stream, in.Worker)
			return subscribeOut{Stream: in.Stream, Worker: in.Worker, Changed: err == nil}, err
		}).annotated("Unsubscribe", destructive|idempotent)
}
