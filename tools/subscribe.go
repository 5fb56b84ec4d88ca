package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
)

type subscribeIn struct {
	Stream string `json:"stream" jsonschema:"the stream's id (s-…)"`
	Worker string `json:"worker,omitempty" jsonschema:"the worker (w-…): by default you, or one below you"`
}

type subscribeOut struct {
	Stream  string `json:"stream"`
	Worker  string `json:"worker"`
	Changed bool   `json:"changed" jsonschema:"false when nothing needed doing"`
}

func subscribe() Tool {
	return define("subscribe", "Subscribe you, or a Worker below you, to a Stream: its events then wake the worker.",
		func(ctx context.Context, env *Env, in subscribeIn) (subscribeOut, error) {
			if in.Stream == "" {
				return subscribeOut{}, domain.Required("stream")
			}
			if in.Worker == "" {
				in.Worker = env.Caller
			}
			added, err := env.Store.Subscribe(ctx, env.Caller, in.Stream, in.Worker)
			return subscribeOut{Stream: in.Stream, Worker: in.Worker, Changed: len(added) > 0}, err
		}).annotated("Subscribe", idempotent).inCore(8)
}
