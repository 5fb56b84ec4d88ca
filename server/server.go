package server

import (
	"log/slog"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/tools"
)

// Config is the server's configuration, passed down from cmd.
type Config struct {
	// MaxRequestBytes bounds an MCP request body.
	MaxRequestBytes int64
	// Routes lets transports mount their own handlers without the core
	// importing them.
	Routes []Route
	// Skills runs skills for the skill tools; nil when there is no Docker.
	Skills tools.SkillRunner
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

	// servers caches each worker's MCP server for its current grant set,
	// so a request only rebuilds one when the grants changed.
	mu      sync.Mutex
	servers map[string]cachedServer
}

type cachedServer struct {
	key string
	srv *mcp.Server
}

// New builds the server's handler tree.
func New(st *store.Store, cfg Config) *Server {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.MaxRequestBytes == 0 {
		cfg.MaxRequestBytes = 4 << 20
	}
	s := &Server{store: st, cfg: cfg, log: cfg.Logger.With("component", "server"), mux: http.NewServeMux(), servers: map[string]cachedServer{}}
	s.mcp = mcp.NewStreamableHTTPHandler(s.workerServer, &mcp.StreamableHTTPOptions{
		// Stateless: each request sees the worker's grants as they are now,
		// so a revoked or expired grant is gone on the very next call.
		Stateless:           true,
		JSONResponse:        true,
		MaxRequestBodyBytes: cfg.MaxRequestBytes,
		Logger:              s.log,
	})
	s.routes()
	return s
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }
