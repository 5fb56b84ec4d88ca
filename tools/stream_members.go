package tools

import (
	"context"
	"time"

	"github.com/helixml/helix-org/domain"
)

type streamMembersIn struct {
	Stream string `json:"stream" jsonschema:"the stream's id (s-…)"`
}

type member struct {
	Worker string            `json:"worker"`
	Name   string            `json:"name"`
	Kind   domain.WorkerKind `json:"kind"`
	Since  time.Time         `json:"since"`
}

type streamMembersOut struct {
	Stream  string   `json:"stream"`
	Members []member `json:"members"`
}

func streamMembers() Tool {
	return define("stream_members", "List the Workers subscribed to a Stream.",
		func(ctx context.Context, env *Env, in streamMembersIn) (streamMembersOut, error) {
			if in.Stream == "" {
				return streamMembersOut{}, domain.Required("stream")
			}
			subs, err := env.Store.StreamMembers(ctx, in.Stream)
			if err != nil {
				return streamMembersOut{}, err
			}
			if err := checkDMAccess(ctx, env, in.Stream); err != nil {
				return streamMembersOut{}, err
			}
			out := streamMembersOut{Stream: in.Stream, Members: []member{}}
			for _, s := range subs {
				w, err := env.Store.GetWorker(ctx, s.WorkerID)
				if err != nil {
					return out, err
				}
				out.Members = append(out.Members, member{Worker: w.ID, Name: w.Name, Kind: w.Kind, Since: s.CreatedAt})
			}
			return out, nil
		}).annotated("Stream members", readOnly|idempotent)
}
