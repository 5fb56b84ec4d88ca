package ui

import (
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/tools"
)

// Config is what the web UI needs from the server that mounts it.
type Config struct {
	// Settings is the registry of every operational config key, for the
	// owner's settings page.
	Settings domain.Settings
	// Skills runs skills for the tools; nil when there is no Docker.
	Skills tools.SkillRunner
	// Status maps an error to its HTTP status: the server's one mapping.
	Status func(error) int
	// Unavailable, for an error of a database that cannot take the
	// request for now, sets Retry-After and returns the error's cause for
	// the log (inbound.Unavailable): the page then says why.
	Unavailable func(http.ResponseWriter, error) (cause error, ok bool)
	// PingInterval is how often a live view gets a keep-alive comment and
	// re-checks its session; 30 s unless a test wants it shorter.
	PingInterval time.Duration
	// Root is the path the org is served under, /orgs/<name>, or "" for
	// the default org: links in pages start with it (redirects and
	// cookie paths get it from the server's org mount).
	Root   string
	Logger *slog.Logger
}

// UI serves the pages under /ui/.
type UI struct {
	st  *store.Store
	cfg Config
	log *slog.Logger
	mux *http.ServeMux
	h   http.Handler
	// pages are parsed on the first page served, not at start: a server
	// whose UI nobody opens never pays for them.
	pages func() pages
	hub   *hub
	// live counts the live views open, against their caps.
	live liveCount
}

// New builds the UI's handler tree and parses every template once.
func New(st *store.Store, cfg Config) *UI {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Status == nil {
		cfg.Status = func(error) int { return http.StatusInternalServerError }
	}
	if cfg.Unavailable == nil {
		cfg.Unavailable = func(http.ResponseWriter, error) (error, bool) { return nil, false }
	}
	if cfg.PingInterval <= 0 {
		cfg.PingInterval = 30 * time.Second
	}
	log := cfg.Logger.With("component", "ui")
	u := &UI{st: st, cfg: cfg, log: log, mux: http.NewServeMux(), pages: sync.OnceValue(func() pages { return parsePages(cfg.Root) }), hub: newHub(st, log)}
	u.routes()
	u.h = u.secure(u.mux)
	return u
}

func (u *UI) ServeHTTP(w http.ResponseWriter, r *http.Request) { u.h.ServeHTTP(w, r) }

// Close ends the org's open live views, once it has stopped: otherwise
// each would wait for its next keep-alive to find the database closed.
func (u *UI) Close() { u.hub.close() }

// routes is the one table of the UI's routes. Pages need a session;
// signed-out visitors reach only sign-in and the static assets.
func (u *UI) routes() {
	page := func(pattern string, h func(http.ResponseWriter, *http.Request, *viewer)) {
		u.mux.Handle(pattern, u.signedIn(h))
	}
	u.mux.HandleFunc("GET /ui/assets/{file}", u.handleAsset)
	u.mux.HandleFunc("GET /ui/signin", u.handleSignInForm)
	u.mux.HandleFunc("POST /ui/signin", u.handleSignIn)
	u.mux.HandleFunc("GET /ui/signin/oidc", u.handleOIDCStart)
	u.mux.HandleFunc("GET /ui/signin/oidc/callback", u.handleOIDCCallback)
	page("POST /ui/signout", u.handleSignOut)
	page("GET /ui/{$}", u.handleOrg)
	page("GET /ui/roles/{id}", u.handleRole)
	page("GET /ui/workers/{id}", u.handleWorker)
	page("GET /ui/streams", u.handleStreams)
	page("GET /ui/streams/{id}", u.handleStream)
	page("GET /ui/chat", u.handleChats)
	page("GET /ui/chat/{worker}", u.handleChat)
	page("GET /ui/fleet", u.handleFleet)
	page("GET /ui/inbox", u.handleInbox)
	page("GET /ui/memory", u.handleMemory)
	page("GET /ui/audit", u.handleAudit)
	page("GET /ui/calls", u.handleCalls)
	page("GET /ui/tasks", u.handleTasks)
	page("GET /ui/tasks/{id}", u.handleTask)
	page("GET /ui/money", u.handleMoney)
	page("GET /ui/settings", u.handleSettings)
	page("GET /ui/people", u.handlePeople)
	page("POST /ui/settings", u.handleSetSetting)
	page("POST /ui/act/{tool}", u.handleAct)
	page("POST /ui/preview", u.handlePreview)
	page("GET /ui/live", u.handleLive)
	page("GET /ui/oauth/authorize", u.handleAuthorize)
	page("POST /ui/oauth/authorize", u.handleConsent)
	u.mux.HandleFunc("/ui/", u.handleNotFound)
}
