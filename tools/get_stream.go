package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
)

type getStreamOut struct {
	Stream  domain.Stream `json:"stream"`
	Members []string      `json:"members"`
}

func getStream() Tool {
	return define("get_stream", "A Stream with its members.",
		func(ctx context.Context, env *Env, in idIn) (getStreamOut, error) {
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
