package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
)

type enableEndpointIn struct {
	Stream string `json:"stream" jsonschema:"the stream whose endpoint answered 410 Gone (s-…)"`
}

type enableEndpointOut struct {
	Stream  string `json:"stream"`
	Enabled bool   `json:"enabled"`
}

// enableEndpoint is the way back from a 410: without it a remote that
// answered Gone once, by mistake, would be cut off for good.
func enableEndpoint() Tool {
	return define("enable_endpoint", "Re-enable a stream's outbound endpoint that answered 410 Gone; later events are sent again.",
		func(ctx context.Context, env *Env, in enableEndpointIn) (enableEndpointOut, error) {
			if in.Stream == "" {
				return enableEndpointOut{}, domain.Required("stream")
			}
			if _, err := env.Store.GetStream(ctx, in.Stream); err != nil {
				return enableEndpointOut{}, err
			}
			if err := env.Store.EnableEndpoint(ctx, env.Caller, in.Stream); err != nil {
				return enableEndpointOut{}, err
			}
			return enableEndpointOut{Stream: in.Stream, Enabled: true}, nil
		}).annotated("Enable endpoint", idempotent|openWorld)
}
