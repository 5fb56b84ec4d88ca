package domain

import (
	"encoding/json"
	"net/url"
	"strings"
	"time"
)

// MCPTransport is how helix-org reaches an outside MCP server.
type MCPTransport string

const (
	// MCPHTTP is Streamable HTTP at a URL.
	MCPHTTP MCPTransport = "http"
	// MCPStdio is a command helix-org runs, one process per server.
	MCPStdio MCPTransport = "stdio"
)

// MCPTransports are the valid transports.
var MCPTransports = []MCPTransport{MCPHTTP, MCPStdio}

// OutsideToolSep joins a server's name and its tool's: github__get_issue.
const OutsideToolSep = "__"

// DefaultMCPTimeout bounds one call to an outside server when its own
// timeout is unset.
const DefaultMCPTimeout = 30 * time.Second

var mcpServerName = LazyRegexp(`^[a-z0-9_-]{1,40}$`)

// MCPServer is an outside MCP server the org reaches through helix-org.
// Its credential (MCPAuth) is kept apart: no read of a server carries it.
type MCPServer struct {
	Name      string       `json:"name"`
	Transport MCPTransport `json:"transport"`
	URL       string       `json:"url,omitempty"`
	Command   string       `json:"command,omitempty"`
	Args      []string     `json:"args,omitempty"`
	// Env is what a stdio server's process is given beyond its
	// credential: settings, never secrets (they are shown).
	Env map[string]string `json:"env,omitempty"`
	// AuthType is the kind of credential held for it ("" when none).
	AuthType string `json:"authType,omitempty"`
	// Trusted servers' results carry no untrusted label.
	Trusted bool          `json:"trusted"`
	Timeout time.Duration `json:"timeout"`
	// Tools are its tools as last fetched, so listing never waits on it.
	Tools     []OutsideTool `json:"tools"`
	Healthy   bool          `json:"healthy"`
	Error     string        `json:"error,omitempty"`
	CreatedBy string        `json:"createdBy"`
	CreatedAt time.Time     `json:"createdAt"`
	// RefreshedAt is when its tool list was last fetched.
	RefreshedAt *time.Time `json:"refreshedAt,omitempty"`
}

// OutsideTool is one tool of an outside server, offered as
// <server>__<name>.
type OutsideTool struct {
	Server      string          `json:"server"`
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
	// Annotations are the server's own hints, as it sent them.
	Annotations json.RawMessage `json:"annotations,omitempty"`
	// Trusted is its server's mark, copied so a call needs no lookup.
	Trusted bool `json:"-"`
}

// ToolName is the grantable name of an outside tool.
func (t OutsideTool) ToolName() string { return t.Server + OutsideToolSep + t.Name }

// ReadOnly reports whether the server annotated the tool readOnlyHint.
func (t OutsideTool) ReadOnly() bool {
	var a struct {
		ReadOnly bool `json:"readOnlyHint"`
	}
	json.Unmarshal(t.Annotations, &a)
	return a.ReadOnly
}

// IsOutsideTool reports whether name is an outside tool's
// (<server>__<tool>); built-in tools and skills never hold "__".
func IsOutsideTool(name string) bool { return strings.Contains(name, OutsideToolSep) }

// Validate checks a server's definition before it is stored.
func (s MCPServer) Validate() error {
	if s.Name == "" {
		return Required("name")
	}
	if !mcpServerName().MatchString(s.Name) || strings.Contains(s.Name, OutsideToolSep) {
		return Invalid("name", "%q must be 1-40 of a-z, 0-9, _ and -, without %q (it joins server and tool names)", s.Name, OutsideToolSep)
	}
	switch s.Transport {
	case MCPHTTP:
		if s.Command != "" || len(s.Args) > 0 || len(s.Env) > 0 {
			return Invalid("command", "an http server takes url only, not command, args or env")
		}
		u, err := url.Parse(s.URL)
		if s.URL == "" {
			return Required("url")
		}
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return Invalid("url", "%q is not an http:// or https:// URL", s.URL)
		}
	case MCPStdio:
		if s.URL != "" {
			return Invalid("url", "a stdio server takes command and args, not url")
		}
		if s.Command == "" {
			return Required("command")
		}
	default:
		return EnumError("transport", "transport", s.Transport, MCPTransports)
	}
	if s.Timeout < 0 {
		return Invalid("timeout", "must not be negative")
	}
	return nil
}

// MCPAuth is the credential helix-org holds for an outside server and
// adds to each call: agents never see it.
type MCPAuth struct {
	Type string `json:"type"`
	// bearer
	Token string `json:"token,omitempty"`
	// oauth_client: the client-credentials grant.
	TokenURL     string   `json:"token_url,omitempty"`
	ClientID     string   `json:"client_id,omitempty"`
	ClientSecret string   `json:"client_secret,omitempty"`
	Scopes       []string `json:"scopes,omitempty"`
	// github_app: an installation token minted from the app's key.
	AppID          json.Number `json:"app_id,omitempty"`
	PrivateKey     string      `json:"private_key,omitempty"`
	InstallationID json.Number `json:"installation_id,omitempty"`
	APIURL         string      `json:"api_url,omitempty"`
	// Env names the variable a stdio server reads its token from;
	// GITHUB_PERSONAL_ACCESS_TOKEN by default (github-mcp-server's).
	Env string `json:"env,omitempty"`
}

// Auth types.
const (
	AuthBearer      = "bearer"
	AuthOAuthClient = "oauth_client"
	AuthGitHubApp   = "github_app"
)

// AuthTypes are the valid credential kinds.
var AuthTypes = []string{AuthBearer, AuthOAuthClient, AuthGitHubApp}

// DefaultGitHubAPI is where a github_app credential mints its tokens
// unless api_url says otherwise.
const DefaultGitHubAPI = "https://api.github.com"

// Validate checks that the credential has what its type needs.
func (a MCPAuth) Validate() error {
	need := func(field, v string) error {
		if strings.TrimSpace(v) == "" {
			return Required("auth." + field)
		}
		return nil
	}
	switch a.Type {
	case AuthBearer:
		return need("token", a.Token)
	case AuthOAuthClient:
		for f, v := range map[string]string{"token_url": a.TokenURL, "client_id": a.ClientID, "client_secret": a.ClientSecret} {
			if err := need(f, v); err != nil {
				return err
			}
		}
		return httpURL("auth.token_url", a.TokenURL)
	case AuthGitHubApp:
		for f, v := range map[string]string{"app_id": a.AppID.String(), "private_key": a.PrivateKey, "installation_id": a.InstallationID.String()} {
			if err := need(f, v); err != nil {
				return err
			}
		}
		if a.APIURL != "" {
			return httpURL("auth.api_url", a.APIURL)
		}
		return nil
	}
	return Invalid("auth.type", "%q is not one of %s", a.Type, strings.Join(AuthTypes, ", "))
}

func httpURL(field, v string) error {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Invalid(field, "%q is not an http:// or https:// URL", v)
	}
	return nil
}
