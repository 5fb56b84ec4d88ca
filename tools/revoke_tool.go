package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
)

type revokeToolIn struct {
	Worker string `json:"worker" jsonschema:"whose grant (w-…): a worker below you, or you"`
	Tool   string `json:"tool" jsonschema:"the tool's name, e.g. publish"`
}

type revokeToolOut struct {
	Worker  string `json:"worker"`
	Tool    string `json:"tool"`
	Revoked bool   `json:"revoked"`
}

func revokeTool() Tool {
	return define("revoke_tool", "Revoke a tool grant from a Worker below you, or from yourself.",
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
