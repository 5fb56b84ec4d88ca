package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
)

type listStreamsIn struct {
	Kind string `json:"kind,omitempty" jsonschema:"only streams of this transport kind"`
}

type listStreamsOut struct {
	Streams []domain.Stream `json:"streams"`
}

func listStreams() Tool {
	return define("list_streams", "List Streams, optionally only those of one transport kind.",
		func(ctx context.Context, env *Env, in listStreamsIn) (listStreamsOut, error) {
			if in.Kind != "" {
				if err := domain.TransportKind(in.Kind).Validate("kind"); err != nil {
					return listStreamsOut{}, err
				}
			}
			sts, err := env.Store.ListStreams(ctx, domain.TransportKind(in.Kind))
			for i := range sts {
				sts[i] = redacted(sts[i])
			}
			return listStreamsOut{Streams: orEmpty(sts)}, err
		}, enum("kind", domain.TransportKinds))
}
