package tools

import (
	"context"
)

type removeMCPServerIn struct {
	Name string `json:"name" jsonschema:"the server's name, as list_mcp_servers shows it"`
}

type removeMCPServerOut struct {
	Removed string `json:"removed" jsonschema:"the server removed, with its credential and every grant of its tools"`
}

func removeMCPServer() Tool {
	return define("remove_mcp_server", "Detach an outside MCP server: its credential, its tools and every grant of them go. The owner's alone.",
		func(ctx context.Context, env *Env, in removeMCPServerIn) (removeMCPServerOut, error) {
			if err := ownerOnly(env, "remove_mcp_server"); err != nil {
				return removeMCPServerOut{}, err
			}
			if err := env.Store.RemoveMCPServer(ctx, env.Caller, in.Name); err != nil {
				return removeMCPServerOut{}, err
			}
			if env.Outside != nil {
				env.Outside.Forget(in.Name)
			}
			return removeMCPServerOut{Removed: in.Name}, nil
		}).annotated("Remove MCP server", destructive|idempotent)
}
