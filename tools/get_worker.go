package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
)

type getWorkerIn struct {
	ID string `json:"id,omitempty" jsonschema:"the worker's id (w-…); by default you"`
}

type getWorkerOut struct {
	Worker   domain.Worker   `json:"worker"`
	Position domain.Position `json:"position"`
	Streams  []string        `json:"streams"`
}

func getWorker() Tool {
	return define("get_worker", "Get a Worker with its Position and the Streams it follows (you by default).",
		func(ctx context.Context, env *Env, in getWorkerIn) (getWorkerOut, error) {
			if in.ID == "" {
				in.ID = env.Caller
			}
			w, err := env.Store.GetWorker(ctx, in.ID)
			if err != nil {
				return getWorkerOut{}, err
			}
			p, err := env.Store.GetPosition(ctx, w.PositionID)
			if err != nil {
				return getWorkerOut{}, err
			}
			streams, err := env.Store.SubscribedStreams(ctx, w.ID)
			return getWorkerOut{Worker: w, Position: p, Streams: orEmpty(streams)}, err
		}).annotated("Get worker", readOnly|idempotent).inCore(9)
}
