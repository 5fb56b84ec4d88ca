package tools

import (
	"context"
	"strings"

	"github.com/helixml/helix-org/domain"
)

type subscribeIn struct {
	Stream string `json:"stream" jsonschema:"the stream id"`
	Worker string `json:"worker,omitempty" jsonschema:"the worker; yourself when omitted"`
}

type subscribeOut struct {
	Stream  string `json:"stream"`
	Worker  string `json:"worker"`
	Changed bool   `json:"changed" jsonschema:"false when nothing needed doing"`
}

func subscribe() Tool {
	return define("subscribe", "Subscribe a Worker (yourself by default) to a Stream, so its events reach them. Idempotent.",
		func(ctx context.Context, env *Env, in subscribeIn) (subscribeOut, error) {
			if in.Stream == "" {
				return subscribeOut{}, domain.Required("stream")
			}
			if in.Worker == "" {
				in.Worker = env.Caller
			}
			if strings.HasPrefix(in.Stream, domain.DMStreamPrefix) {
				return subscribeOut{}, domain.Invalid("stream", "%s is a direct-message stream; its members are fixed (use dm to talk to a worker)", in.Stream)
			}
			added, err := env.Store.Subscribe(ctx, env.Caller, in.Stream, in.Worker)
			return subscribeOut{Stream: in.Stream, Worker: in.Worker, Changed: len(added) > 0}, err
		})
}
