package tools

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/helixml/helix-org/domain"
)

type addMCPServerIn struct {
	Name    string     `json:"name" jsonschema:"the server's name: 1-40 of a-z, 0-9, _ and -, without __; its tools are offered as <name>__<tool>"`
	URL     string     `json:"url,omitempty" jsonschema:"its Streamable HTTP endpoint, an http:// or https:// URL; give url or command"`
	Command string     `json:"command,omitempty" jsonschema:"the program helix-org runs for it and talks to over stdio, a path or a name on PATH; give url or command"`
	Args    []string   `json:"args,omitempty" jsonschema:"the program's arguments, with command"`
	Env     []envVar   `json:"env,omitempty" jsonschema:"environment variables of the program, with command: settings, never secrets (they are shown); the credential goes in auth"`
	Auth    *mcpAuthIn `json:"auth,omitempty" jsonschema:"the credential helix-org adds to every call, kept encrypted and never shown to anyone; none when omitted"`
	Trusted bool       `json:"trusted,omitempty" jsonschema:"true: its results are trusted; by default they are untrusted and raise the label of the run that reads them"`
	Timeout string     `json:"timeout,omitempty" jsonschema:"longest one call may take, a duration such as 30s; by default the setting mcp.call_timeout"`
}

// envVar is one environment variable; a list of them, not a map, keeps
// the schema one a strict function-calling model can fill.
type envVar struct {
	Name  string `json:"name" jsonschema:"the variable's name, e.g. GITHUB_TOOLSETS"`
	Value string `json:"value" jsonschema:"its value"`
}

// mcpAuthIn is domain.MCPAuth as a caller writes it.
type mcpAuthIn struct {
	Type           string   `json:"type" jsonschema:"bearer (token), oauth_client (token_url, client_id, client_secret, scopes) or github_app (app_id, private_key, installation_id, api_url)"`
	Token          string   `json:"token,omitempty" jsonschema:"bearer: the token sent as Authorization: Bearer"`
	TokenURL       string   `json:"token_url,omitempty" jsonschema:"oauth_client: the token endpoint of the client-credentials grant, an https:// URL"`
	ClientID       string   `json:"client_id,omitempty" jsonschema:"oauth_client: the client id"`
	ClientSecret   string   `json:"client_secret,omitempty" jsonschema:"oauth_client: the client secret"`
	Scopes         []string `json:"scopes,omitempty" jsonschema:"oauth_client: the scopes to ask for"`
	AppID          int64    `json:"app_id,omitempty" jsonschema:"github_app: the GitHub App's id"`
	PrivateKey     string   `json:"private_key,omitempty" jsonschema:"github_app: the app's private key, PEM"`
	InstallationID int64    `json:"installation_id,omitempty" jsonschema:"github_app: the installation whose token each call carries"`
	APIURL         string   `json:"api_url,omitempty" jsonschema:"github_app: the GitHub API that mints installation tokens; https://api.github.com by default"`
	Env            string   `json:"env,omitempty" jsonschema:"with command: the environment variable the program reads its token from; GITHUB_PERSONAL_ACCESS_TOKEN by default"`
}

func (a *mcpAuthIn) domain() *domain.MCPAuth {
	if a == nil {
		return nil
	}
	num := func(n int64) json.Number {
		if n == 0 {
			return ""
		}
		return json.Number(strconv.FormatInt(n, 10))
	}
	return &domain.MCPAuth{Type: a.Type, Token: a.Token, TokenURL: a.TokenURL, ClientID: a.ClientID, ClientSecret: a.ClientSecret, Scopes: a.Scopes,
		AppID: num(a.AppID), PrivateKey: a.PrivateKey, InstallationID: num(a.InstallationID), APIURL: a.APIURL, Env: a.Env}
}

func addMCPServer() Tool {
	return define("add_mcp_server", "Attach an outside MCP server (Streamable HTTP url, or a command run over stdio in the sandbox) with a credential agents never see; its tools become grantable as <name>__<tool>, the owner holding them all. The owner's alone.",
		func(ctx context.Context, env *Env, in addMCPServerIn) (mcpServerView, error) {
			if err := ownerOnly(env, "add_mcp_server"); err != nil {
				return mcpServerView{}, err
			}
			srv, err := in.server()
			if err != nil {
				return mcpServerView{}, err
			}
			if env.Outside == nil {
				return mcpServerView{}, errNoOutside
			}
			if _, err := env.Store.AddMCPServer(ctx, env.Caller, srv, in.Auth.domain()); err != nil {
				return mcpServerView{}, err
			}
			// A server that cannot be reached is kept, unhealthy, with why:
			// it may come up later, and the next call tries again.
			added, _ := env.Outside.Refresh(ctx, in.Name)
			return viewOfServer(added), nil
		}, enum("auth.type", domain.AuthTypes)).annotated("Add MCP server", openWorld)
}

// server is the server the input describes; the store validates the rest.
func (in addMCPServerIn) server() (domain.MCPServer, error) {
	srv := domain.MCPServer{Name: in.Name, URL: in.URL, Command: in.Command, Args: in.Args, Trusted: in.Trusted, Transport: domain.MCPHTTP}
	for _, e := range in.Env {
		if e.Name == "" || strings.ContainsAny(e.Name, "=\x00") {
			return srv, domain.Invalid("env", "%q is not an environment variable's name", e.Name)
		}
		if srv.Env == nil {
			srv.Env = map[string]string{}
		}
		srv.Env[e.Name] = e.Value
	}
	switch {
	case in.URL != "" && in.Command != "":
		return srv, domain.Invalid("url", "give url (Streamable HTTP) or command (stdio), not both")
	case in.URL == "" && in.Command == "":
		return srv, domain.Invalid("url", "give url (Streamable HTTP) or command (stdio)")
	case in.Command != "":
		srv.Transport = domain.MCPStdio
	}
	if in.Timeout != "" {
		d, err := time.ParseDuration(in.Timeout)
		if err != nil || d <= 0 {
			return srv, domain.Invalid("timeout", "%q is not a positive duration such as 30s", in.Timeout)
		}
		srv.Timeout = d
	}
	return srv, srv.Validate()
}

// ownerOnly refuses a caller other than the owner: attaching outside
// servers and their credentials is the org's configuration.
func ownerOnly(env *Env, tool string) error {
	if env.Caller != domain.OwnerWorker {
		return domain.Forbidden("%s is the owner's (%s) alone; %s cannot call it", tool, domain.OwnerWorker, env.Caller)
	}
	return nil
}

// mcpServerView is an outside server as the tools show it: never its
// credential, only its kind.
type mcpServerView struct {
	Name      string   `json:"name" jsonschema:"the server's name"`
	Transport string   `json:"transport" jsonschema:"http or stdio"`
	URL       string   `json:"url,omitempty" jsonschema:"its endpoint, for http"`
	Command   string   `json:"command,omitempty" jsonschema:"its program, for stdio"`
	AuthType  string   `json:"authType,omitempty" jsonschema:"the kind of credential held for it"`
	Trusted   bool     `json:"trusted" jsonschema:"its results are trusted"`
	Healthy   bool     `json:"healthy" jsonschema:"its last connection or call worked"`
	Error     string   `json:"error,omitempty" jsonschema:"why it is unhealthy"`
	Tools     int      `json:"tools" jsonschema:"how many tools it offers"`
	ToolNames []string `json:"toolNames,omitempty" jsonschema:"its tools' grantable names, <server>__<tool>"`
}

func viewOfServer(s domain.MCPServer) mcpServerView {
	v := mcpServerView{Name: s.Name, Transport: string(s.Transport), URL: s.URL, Command: s.Command, AuthType: s.AuthType,
		Trusted: s.Trusted, Healthy: s.Healthy, Error: s.Error, Tools: len(s.Tools)}
	for _, t := range s.Tools {
		v.ToolNames = append(v.ToolNames, t.ToolName())
	}
	return v
}
