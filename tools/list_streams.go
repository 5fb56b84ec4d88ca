package tools

import (
	"context"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/helixml/helix-org/domain"
)

type listStreamsIn struct {
	Kind     string `json:"kind,omitempty" jsonschema:"only streams of this transport kind"`
	Archived bool   `json:"archived,omitempty" jsonschema:"true to list archived streams too, each with its archivedAt; by default only streams in use"`
}

type listStreamsOut struct {
	Streams []domain.Stream `json:"streams"`
}

func listStreams() Tool {
	return define("list_streams", "List Streams in use, optionally of one transport kind, archived ones too when asked; secrets are redacted.",
		func(ctx context.Context, env *Env, in listStreamsIn) (listStreamsOut, error) {
			if in.Kind != "" {
				if _, err := env.Store.Transports().Spec("kind", domain.TransportKind(in.Kind)); err != nil {
					return listStreamsOut{}, err
				}
			}
			list := env.Store.ListStreams
			if in.Archived {
				list = env.Store.ListAllStreams
			}
			sts, err := list(ctx, domain.TransportKind(in.Kind))
			for i := range sts {
				sts[i] = redacted(env, sts[i])
			}
			return listStreamsOut{Streams: orEmpty(sts)}, err
		}).withTransports(func(ts *domain.Transports, s *jsonschema.Schema) { enum("kind", ts.Kinds())(s) }).annotated("List streams", readOnly|idempotent).inCore(10)
}
