package tools

import (
	"context"
	"slices"

	"github.com/helixml/helix-org/domain"
)

type inviteWorkersIn struct {
	Stream  string   `json:"stream" jsonschema:"the stream to subscribe them to (s-…)"`
	Workers []string `json:"workers" jsonschema:"the workers to subscribe (w-…): you or workers below you"`
}

type inviteWorkersOut struct {
	Stream  string   `json:"stream"`
	Added   []string `json:"added" jsonschema:"workers newly subscribed"`
	Already []string `json:"already" jsonschema:"workers that were members already"`
}

func inviteWorkers() Tool {
	return define("invite_workers", "Subscribe several Workers (you or below you) to a Stream at once.",
		func(ctx context.Context, env *Env, in inviteWorkersIn) (inviteWorkersOut, error) {
			if in.Stream == "" {
				return inviteWorkersOut{}, domain.Required("stream")
			}
			if len(in.Workers) == 0 {
				return inviteWorkersOut{}, domain.Required("workers")
			}
			ws := dedupe(in.Workers)
			if domain.IsDM(in.Stream) {
				return inviteWorkersOut{}, domain.Invalid("stream", "%s is a direct-message stream; its two members join it, each for itself with subscribe (use dm to talk to a worker)", in.Stream)
			}
			added, err := env.Store.Subscribe(ctx, env.Caller, in.Stream, ws...)
			if err != nil {
				return inviteWorkersOut{}, err
			}
			out := inviteWorkersOut{Stream: in.Stream, Added: orEmpty(added), Already: []string{}}
			for _, w := range ws {
				if !slices.Contains(added, w) {
					out.Already = append(out.Already, w)
				}
			}
			return out, nil
		}).annotated("Invite workers", idempotent)
}
