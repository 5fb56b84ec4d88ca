// Package gateway reaches the outside MCP servers the org has attached:
// one client session per server, over Streamable HTTP or to a process it
// runs (stdio, in the host-agent sandbox), with the server's credential
// added by a broker, and a deadline on every call. It fetches each
// server's tool list into the store, so listing tools never waits on a
// server. It must not decide who may call what: grants, approvals and
// labels are the tools package's.
package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/safedial"
	"github.com/helixml/helix-org/store"
)

// CallTimeoutSetting bounds a call to an outside server whose own timeout
// is unset.
var CallTimeoutSetting = domain.SettingSpec{Key: "mcp.call_timeout", Type: domain.SettingDuration, Default: domain.DefaultMCPTimeout.String(),
	Description: "Longest an outside MCP server may take over one tool call (or connecting) before the call answers a tool error; a server's own timeout overrides it."}

// Options configure a Gateway.
type Options struct {
	// Sandbox is the sandbox stdio servers run in, asked for when one
	// starts (the server's check may still be running); nil, or a nil
	// answer, refuses them unless Unsandboxed.
	Sandbox func() *agent.Bwrap
	// Unsandboxed lets stdio servers run as the server's user (agent.sandbox off).
	Unsandboxed bool
	// Dir holds each stdio server's working directory (Dir/<name>).
	Dir string
	// AllowPrivate lets HTTP servers and token endpoints be on loopback or
	// private addresses (safedial); nil asks the store's setting.
	AllowPrivate func(ctx context.Context) bool
	Logger       *slog.Logger
}

// Gateway holds the sessions to outside servers.
type Gateway struct {
	st     *store.Store
	opts   Options
	http   http.RoundTripper
	broker *broker
	log    *slog.Logger

	mu    sync.Mutex
	conns map[string]*conn
}

// New returns a gateway over st's servers; it connects lazily.
func New(st *store.Store, opts Options) *Gateway {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.AllowPrivate == nil {
		opts.AllowPrivate = func(ctx context.Context) bool { return st.BoolSetting(ctx, safedial.AllowPrivateSetting) }
	}
	client := safedial.NewClient(safedial.Options{AllowPrivate: opts.AllowPrivate})
	return &Gateway{st: st, opts: opts, http: client.Transport, log: opts.Logger.With("component", "gateway"),
		broker: &broker{client: client, now: st.Now, tokens: map[string]minted{}}, conns: map[string]*conn{}}
}

// conn is the session to one server. mu serialises connecting, so a slow
// server holds up only its own callers.
type conn struct {
	mu      sync.Mutex
	session *mcp.ClientSession
	// expires is when the token a stdio process was started with lapses
	// (zero: never); the process is restarted with a new one before.
	expires time.Time
}

func (g *Gateway) conn(name string) *conn {
	g.mu.Lock()
	defer g.mu.Unlock()
	c := g.conns[name]
	if c == nil {
		c = &conn{}
		g.conns[name] = c
	}
	return c
}

// Refresh connects to the server anew and records its tool list and
// health; it answers the server as stored after, and why it could not
// connect.
func (g *Gateway) Refresh(ctx context.Context, name string) (domain.MCPServer, error) {
	srv, err := g.st.GetMCPServer(ctx, name)
	if err != nil {
		return domain.MCPServer{}, err
	}
	c := g.conn(name)
	c.mu.Lock()
	c.drop()
	ctx, cancel := context.WithTimeout(ctx, g.timeout(ctx, srv))
	defer cancel()
	_, err = g.sessionLocked(ctx, c, srv)
	c.mu.Unlock()
	after, gerr := g.st.GetMCPServer(context.WithoutCancel(ctx), name)
	if gerr != nil {
		return after, gerr
	}
	return after, err
}

// Forget closes the session to a removed server.
func (g *Gateway) Forget(name string) {
	g.mu.Lock()
	c := g.conns[name]
	delete(g.conns, name)
	g.mu.Unlock()
	g.broker.forget(name)
	if c != nil {
		c.mu.Lock()
		c.drop()
		c.mu.Unlock()
	}
}

// Close ends every session (stopping stdio processes).
func (g *Gateway) Close() {
	g.mu.Lock()
	names := make([]string, 0, len(g.conns))
	for n := range g.conns {
		names = append(names, n)
	}
	g.mu.Unlock()
	for _, n := range names {
		g.Forget(n)
	}
}

func (c *conn) drop() {
	if c.session != nil {
		c.session.Close()
		c.session = nil
	}
}

func (g *Gateway) timeout(ctx context.Context, srv domain.MCPServer) time.Duration {
	if srv.Timeout > 0 {
		return srv.Timeout
	}
	return g.st.DurationSetting(ctx, CallTimeoutSetting)
}

// Call calls tool on server with args, within the server's timeout. A
// server that is down, hangs or dies answers an error naming it; the
// session is then dropped, so the next call connects (or restarts the
// process) afresh and fetches the tool list again.
func (g *Gateway) Call(ctx context.Context, server, tool string, args json.RawMessage) (*mcp.CallToolResult, error) {
	srv, err := g.st.GetMCPServer(ctx, server)
	if err != nil {
		return nil, err
	}
	limit := g.timeout(ctx, srv)
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	c := g.conn(server)
	c.mu.Lock()
	session, err := g.sessionLocked(ctx, c, srv)
	c.mu.Unlock()
	if err != nil {
		return nil, g.failed(ctx, srv, limit, err)
	}
	var arguments any = map[string]any{}
	if len(args) > 0 {
		arguments = args
	}
	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: arguments})
	switch {
	case err == nil:
		return res, nil
	case ctx.Err() != nil:
		// One call hung; the session may still serve the next.
		g.st.SetMCPHealth(context.WithoutCancel(ctx), server, false, fmt.Sprintf("a call of %s did not answer within %s", tool, limit))
	default:
		c.mu.Lock()
		if c.session == session {
			c.session = nil
			go session.Close() // a dead peer may make closing wait
		}
		c.mu.Unlock()
		g.st.SetMCPHealth(context.WithoutCancel(ctx), server, false, err.Error())
	}
	return nil, g.failed(ctx, srv, limit, err)
}

// failed words a failed call for the caller: the deadline by its length.
func (g *Gateway) failed(ctx context.Context, srv domain.MCPServer, limit time.Duration, err error) error {
	if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
		return fmt.Errorf("mcp server %s did not answer within %s", srv.Name, limit)
	}
	return fmt.Errorf("mcp server %s: %w", srv.Name, err)
}

// sessionLocked is c's live session, connecting (and fetching the tool
// list) when there is none or a stdio process's token is about to lapse.
func (g *Gateway) sessionLocked(ctx context.Context, c *conn, srv domain.MCPServer) (*mcp.ClientSession, error) {
	if c.session != nil && (c.expires.IsZero() || g.st.Now().Add(early).Before(c.expires)) {
		return c.session, nil
	}
	c.drop()
	session, expires, err := g.connect(ctx, srv)
	if err == nil {
		err = g.fetchTools(ctx, session, srv.Name)
		if err != nil {
			session.Close()
		}
	}
	if err != nil {
		g.st.SetMCPHealth(context.WithoutCancel(ctx), srv.Name, false, err.Error())
		g.log.Warn("outside mcp server unavailable", "server", srv.Name, "err", err)
		return nil, err
	}
	c.session, c.expires = session, expires
	return session, nil
}

// fetchTools lists the server's tools, every page, into the store.
func (g *Gateway) fetchTools(ctx context.Context, session *mcp.ClientSession, name string) error {
	var tools []domain.OutsideTool
	for t, err := range session.Tools(ctx, nil) {
		if err != nil {
			return fmt.Errorf("list tools: %w", err)
		}
		schema, err := json.Marshal(t.InputSchema)
		if err != nil {
			return fmt.Errorf("tool %s: input schema: %w", t.Name, err)
		}
		o := domain.OutsideTool{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: schema}
		if t.Annotations != nil {
			o.Annotations, _ = json.Marshal(t.Annotations)
			if o.Title == "" {
				o.Title = t.Annotations.Title
			}
		}
		tools = append(tools, o)
	}
	return g.st.SetMCPTools(ctx, name, tools)
}

// connect opens a session to srv with its credential.
func (g *Gateway) connect(ctx context.Context, srv domain.MCPServer) (*mcp.ClientSession, time.Time, error) {
	auth, err := g.st.MCPServerAuth(ctx, srv.Name)
	if err != nil {
		return nil, time.Time{}, err
	}
	var t mcp.Transport
	var expires time.Time
	switch srv.Transport {
	case domain.MCPHTTP:
		rt := withToken{base: g.http, token: func(ctx context.Context) (string, error) {
			m, err := g.broker.token(ctx, srv.Name, auth)
			return m.token, err
		}}
		t = &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: &http.Client{Transport: rt}, MaxRetries: -1, DisableStandaloneSSE: true}
	case domain.MCPStdio:
		m, err := g.broker.token(ctx, srv.Name, auth)
		if err != nil {
			return nil, time.Time{}, err
		}
		cmd, err := g.command(srv, auth, m.token)
		if err != nil {
			return nil, time.Time{}, err
		}
		t, expires = &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, m.expires
	default:
		return nil, time.Time{}, domain.EnumError("transport", "transport", srv.Transport, domain.MCPTransports)
	}
	// A client per session: a client remembers what it negotiated.
	client := mcp.NewClient(&mcp.Implementation{Name: "helix-org-gateway", Version: "1"}, nil)
	session, err := client.Connect(ctx, t, nil)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("connect: %w", err)
	}
	return session, expires, nil
}

// command is the process of a stdio server: in the sandbox, in a
// directory of its own, with an environment of its settings and its
// token alone — nothing of helix-org's own environment.
func (g *Gateway) command(srv domain.MCPServer, auth *domain.MCPAuth, token string) (*exec.Cmd, error) {
	path, err := exec.LookPath(srv.Command)
	if err != nil {
		return nil, fmt.Errorf("command %s: %w", srv.Command, err)
	}
	if path, err = filepath.Abs(path); err != nil {
		return nil, err
	}
	cmd := exec.Command(path, srv.Args...)
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin"}
	for k, v := range srv.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	if token != "" {
		name := auth.Env
		if name == "" {
			name = "GITHUB_PERSONAL_ACCESS_TOKEN"
		}
		cmd.Env = append(cmd.Env, name+"="+token)
	}
	dir := filepath.Join(g.opts.Dir, "mcp-"+srv.Name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("directory of mcp server %s: %w", srv.Name, err)
	}
	cmd.Dir = dir
	var sb *agent.Bwrap
	if g.opts.Sandbox != nil {
		sb = g.opts.Sandbox()
	}
	switch {
	case sb != nil:
		if err := sb.Wrap(cmd, dir, path); err != nil {
			return nil, err
		}
	case !g.opts.Unsandboxed:
		return nil, errors.New("stdio servers run only in the bubblewrap sandbox, and there is none here: install bubblewrap, or set agent.sandbox off to run them as the server's user")
	}
	return cmd, nil
}
