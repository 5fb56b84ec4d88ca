package tools

import (
	"context"
)

type listMCPServersIn struct{}

type listMCPServersOut struct {
	Servers []mcpServerView `json:"servers" jsonschema:"every attached server, by name"`
}

func listMCPServers() Tool {
	return define("list_mcp_servers", "List the outside MCP servers attached to the org: transport, health, and the tools each offers.",
		func(ctx context.Context, env *Env, _ listMCPServersIn) (listMCPServersOut, error) {
			servers, err := env.Store.ListMCPServers(ctx)
			if err != nil {
				return listMCPServersOut{}, err
			}
			out := listMCPServersOut{Servers: []mcpServerView{}}
			for _, s := range servers {
				out.Servers = append(out.Servers, viewOfServer(s))
			}
			return out, nil
		}).annotated("List MCP servers", readOnly|idempotent)
}
