package server

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server/metrics"
	"github.com/helixml/helix-org/server/oauth"
	"github.com/helixml/helix-org/server/relay"
	"github.com/helixml/helix-org/server/ui"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/tools"
	"github.com/helixml/helix-org/transports/inbound"
)

// Config is the server's configuration, passed down from cmd.
type Config struct {
	// MaxRequestBytes bounds an MCP request body.
	MaxRequestBytes int64
	// CallTimeout is how long an authenticated request may run and write
	// its answer, in place of the http.Server's timeouts; default
	// DefaultCallTimeout.
	CallTimeout time.Duration
	// Routes lets transports mount their own handlers without the core
	// importing them.
	Routes []Route
	// Skills runs skills for the skill tools; nil when there is no Docker.
	Skills tools.SkillRunner
	// Outside reaches outside MCP servers (the gateway); nil reaches none.
	Outside tools.Outside
	// Upstream is the model provider the relay calls for activations, read
	// on every call; nil means none (the relay answers 503).
	Upstream func(ctx context.Context) (relay.Upstream, error)
	// Gemini is the Gemini API's upstream for the relay, read on every
	// call; nil means none.
	Gemini func(ctx context.Context) (relay.Upstream, error)
	// Settings is the registry of operational config keys, which the web
	// UI's settings page shows the owner (cmd passes its settings()).
	Settings domain.Settings
	// Metrics, if set, counts what the server does and is served at
	// /metrics to the owner.
	Metrics *metrics.Metrics
	// Dispatching reports whether the dispatcher runs, for /readyz; nil
	// leaves it out of the check.
	Dispatching func() bool
	// AccessLog logs every request, not only the refused ones.
	AccessLog bool
	// Root is the path this org is served under (OrgPrefix), or "" for
	// the default org; the links pages and tools give people start with it.
	Root   string
	Logger *slog.Logger
}

// Route is an extra handler mounted by a transport, e.g. "POST /webhooks/{streamId}".
type Route struct {
	Pattern string
	Handler http.Handler
}

// Server serves the org graph over HTTP.
type Server struct {
	store *store.Store
	cfg   Config
	log   *slog.Logger
	mux   *http.ServeMux
	mcp   http.Handler
	relay *relay.Relay
	ui    *ui.UI
	// oauth is the authorization server MCP clients log in through.
	oauth *oauth.Handler

	// servers caches each worker's tool environment and MCP server for
	// its current grant set, so a request only rebuilds them when the
	// grants changed.
	mu      sync.Mutex
	servers map[string]*cachedServer
	// running are the tasks this process is running, by id.
	running map[string]runningTask
	// taskRenew is how often a running task's lease is renewed.
	taskRenew time.Duration
	// directCalls and directLists count the calls and tools/lists
	// serveCalls and serveLists answered without the go-sdk; viaSDK
	// (tests only) sends every one to it instead.
	directCalls atomic.Int64
	directLists atomic.Int64
	viaSDK      bool
	// catalogs keeps each grant set's catalog and tools/list answer.
	catalogs catalogCache
	// draining is closed by Drain.
	draining  chan struct{}
	drainOnce sync.Once
}

type cachedServer struct {
	key string
	env *tools.Env
	srv *mcp.Server // nil until the go-sdk serves the worker a request
	// catalog is the catalogKey srv lists its tools by: the limits may
	// change while the grants do not.
	catalog string
}

// Drain ends what a request would otherwise hold open once the org stops
// serving: the web UI's live views end, and long-polls (read_events and
// worker_log waiting) answer with what they have. Neither then holds up
// an HTTP shutdown, nor reads a database closed under it.
func (s *Server) Drain() {
	s.drainOnce.Do(func() { close(s.draining) })
	s.ui.Close()
}

// New builds the server's handler tree.
func New(st *store.Store, cfg Config) *Server {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.MaxRequestBytes == 0 {
		cfg.MaxRequestBytes = 4 << 20
	}
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = DefaultCallTimeout
	}
	s := &Server{store: st, cfg: cfg, log: cfg.Logger.With("component", "server"), mux: http.NewServeMux(), servers: map[string]*cachedServer{},
		running: map[string]runningTask{}, taskRenew: store.TaskLease / 3, catalogs: catalogCache{entries: map[string]*catalogEntry{}}, draining: make(chan struct{})}
	// No call of a task can still be running in a new process.
	if n, err := st.FailInterruptedTasks(context.Background()); err != nil {
		s.log.Error("fail interrupted tasks", "err", err)
	} else if n > 0 {
		s.log.Warn("failed tasks a restart interrupted", "tasks", n)
	}
	s.mcp = mcp.NewStreamableHTTPHandler(s.workerServer, &mcp.StreamableHTTPOptions{
		// Stateless: each request sees the worker's grants as they are now,
		// so a revoked or expired grant is gone on the very next call.
		Stateless:           true,
		JSONResponse:        true,
		MaxRequestBodyBytes: cfg.MaxRequestBytes,
		Logger:              s.log,
	})
	rc := relay.Config{Store: st, Upstream: cfg.Upstream, Gemini: cfg.Gemini, Logger: cfg.Logger}
	if m := cfg.Metrics; m != nil {
		rc.OnUsage = func(u store.Usage) { m.ModelCall(u.Model, u.Input, u.Output, u.Cost) }
	}
	s.relay = relay.New(rc)
	s.oauth = oauth.New(st, cfg.Logger)
	s.ui = ui.New(st, ui.Config{Root: cfg.Root, Settings: cfg.Settings, Skills: cfg.Skills, Status: inbound.Status, Unavailable: inbound.Unavailable, Logger: cfg.Logger})
	s.routes()
	return s
}
