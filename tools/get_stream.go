package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
)

type getStreamIn struct {
	ID string `json:"id" jsonschema:"the stream's id (s-…)"`
}

type getStreamOut struct {
	Stream  domain.Stream `json:"stream"`
	Members []string      `json:"members"`
}

func getStream() Tool {
	return define("get_stream", "Get a Stream with its members; secrets in its config are redacted.",
		func(ctx context.Context, env *Env, in getStreamIn) (getStreamOut, error) {
			if in.ID == "" {
				return getStreamOut{}, domain.Required("id")
			}
			st, err := env.Store.GetStream(ctx, in.ID)
			if err != nil {
				return getStreamOut{}, err
			}
			if err := checkDMAccess(ctx, env, st.ID); err != nil {
				return getStreamOut{}, err
			}
			subs, err := env.Store.StreamMembers(ctx, in.ID)
			members := []string{}
			for _, s := range subs {
				members = append(members, s.WorkerID)
			}
			return getStreamOut{Stream: redacted(env, st), Members: members}, err
		}).annotated("Get stream", readOnly|idempotent)
}
