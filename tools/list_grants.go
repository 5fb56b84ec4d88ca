package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
)

type listGrantsIn struct {
	Worker string `json:"worker,omitempty" jsonschema:"whose grants (w-…); by default yours"`
}

type grantView struct {
	domain.Grant
	Live bool `json:"live"`
}

type listGrantsOut struct {
	Grants []grantView `json:"grants"`
}

func listGrants() Tool {
	return define("list_grants", "List a Worker's tool grants, live or expired, with who gave each and when it ends.",
		func(ctx context.Context, env *Env, in listGrantsIn) (listGrantsOut, error) {
			if in.Worker == "" {
				in.Worker = env.Caller
			}
			if _, err := env.Store.GetWorker(ctx, in.Worker); err != nil {
				return listGrantsOut{}, err
			}
			gs, err := env.Store.ListGrants(ctx, in.Worker)
			out := make([]grantView, len(gs))
			for i, g := range gs {
				out[i] = grantView{Grant: g, Live: g.Live(env.Store.Now())}
			}
			return listGrantsOut{Grants: out}, err
		}).annotated("List grants", readOnly|idempotent)
}
