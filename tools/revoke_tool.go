package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
)

type revokeToolIn struct {
	Worker string `json:"worker"`
	Tool   string `json:"tool"`
}

type revokeToolOut struct {
	Worker  string `json:"worker"`
	Tool    string `json:"tool"`
	Revoked bool   `json:"revoked"`
}

func revokeTool() Tool {
	return define("revoke_tool", "Revoke a tool grant.",
		func(ctx context.Context, env *Env, in revokeToolIn) (revokeToolOut, error) {
			if in.Worker == "" {
				return revokeToolOut{}, domain.Required("worker")
			}
			if in.Tool == "" {
				return revokeToolOut{}, domain.Required("tool")
			}
			if err := env.Store.RevokeTool(ctx, env.Caller, in.Worker, in.Tool); err != nil {
				return revokeToolOut{}, err
			}
			return revokeToolOut{Worker: in.Worker, Tool: in.Tool, Revoked: true}, nil
		}).annotated("Revoke tool", destructive|idempotent)
}
