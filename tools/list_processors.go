package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
)

type listProcessorsIn struct {
	Stream string `json:"stream,omitempty" jsonschema:"only the processors that read or write this stream (s-…)"`
}

type listProcessorsOut struct {
	Processors []domain.Processor `json:"processors"`
}

func listProcessors() Tool {
	return define("list_processors", "List the processors between streams: each one's input, kind, config and outputs, how many events it has processed, how many wait, and its failures.",
		func(ctx context.Context, env *Env, in listProcessorsIn) (listProcessorsOut, error) {
			if in.Stream != "" {
				if _, err := env.Store.GetStream(ctx, in.Stream); err != nil {
					return listProcessorsOut{}, err
				}
			}
			ps, err := env.Store.ListProcessors(ctx, in.Stream)
			return listProcessorsOut{Processors: orEmpty(ps)}, err
		}).annotated("List processors", readOnly|idempotent)
}
