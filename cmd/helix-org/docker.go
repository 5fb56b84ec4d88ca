package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/agent/docker"
	"github.com/helixml/helix-org/agent/skill"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/tools"
)

// dockerHost is the server's Docker side: the engine, the skill factory,
// and the listener through which activation containers reach their MCP
// endpoints. Nothing touches the daemon until it is needed, so a server
// without Docker runs fine and only the docker runtime and skills fail.
//
// Reachability: the server normally listens on loopback, which no
// container can reach. So on first need it creates this instance's
// internal "agents" bridge network and listens on that network's gateway
// address, bound to the bridge device (connections arriving from any other
// bridge, such as the skills network, are refused by the kernel) and
// serving only /workers/{id}/mcp and the model relay. Activation
// containers get that address in HELIX_ORG_MCP_URL (which mcp.json refers to) and the
// relay variables; their token still confines each to its own worker's
// endpoint and its own run's model calls.
type dockerHost struct {
	st        *store.Store
	eng       *docker.Engine
	skills    *skill.Factory
	forbidden []string
	log       *slog.Logger
	// agents serves the agent routes (MCP and the model relay) to
	// containers; set once the server exists, with the edge limits its
	// listener runs under.
	agents http.Handler
	edge   edgeConfig

	// up says whether the daemon answered the ping connect sent at
	// start-up, waiting for the answer the first time.
	up func() bool

	mu   sync.Mutex
	base string
	hs   *http.Server
	// bg is the skills' recovery and idle loop, waited for at shutdown.
	bg sync.WaitGroup
}

var (
	_ skill.Store       = (*store.Store)(nil)
	_ tools.SkillRunner = (*skill.Factory)(nil)
)

// skillIdleTick is how often idle skills are looked for.
const skillIdleTick = 30 * time.Second

// skillStopTimeout bounds stopping the skills at shutdown. It is its own
// budget: the activations' grace may already be spent.
const skillStopTimeout = 30 * time.Second

func newDockerHost(st *store.Store, keyFile string, log *slog.Logger) (*dockerHost, error) {
	eng, err := docker.NewEngine(docker.InstanceID(st.Path()), log)
	if err != nil {
		return nil, err
	}
	if keyFile == "" {
		keyFile = st.KeyFile()
	}
	return &dockerHost{st: st, eng: eng, skills: skill.New(eng, st, log), log: log.With("component", "docker"),
		forbidden: []string{st.Path(), st.Path() + "-wal", st.Path() + "-shm", keyFile}}, nil
}

// skillRunner is the factory as the tools see it, or nil without Docker.
func (h *dockerHost) skillRunner() tools.SkillRunner {
	if h == nil {
		return nil
	}
	return h.skills
}

// agentRoutes exposes what an activation needs and nothing else: the
// per-worker MCP endpoints and the model relay.
func agentRoutes(srv http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/workers/{id}/mcp", srv)
	mux.Handle(domain.RelayPath+"/", srv)
	return mux
}

// connect checks once that the daemon answers: after the server's first
// answer (warm), or as soon as something needs Docker, whichever is
// first, so a cold start's first request shares the cores with no
// Docker client. Only reaping leftover containers and the skills wait
// for the answer. Without a daemon it logs and the docker runtime and
// skills fail until there is one.
func (h *dockerHost) connect(ctx context.Context, warm <-chan struct{}) {
	if h == nil {
		return
	}
	answered, needed := make(chan bool, 1), make(chan struct{})
	if warm == nil { // an org with no gate is warm
		c := make(chan struct{})
		close(c)
		warm = c
	}
	go func() {
		select {
		case <-warm:
		case <-needed:
		case <-ctx.Done():
		}
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		err := h.eng.Ping(pctx)
		if err != nil {
			h.log.Info("Docker is not reachable; the docker runtime and skills are unavailable until it is", "err", err)
		}
		answered <- err == nil
	}()
	h.up = sync.OnceValue(func() bool {
		close(needed)
		return <-answered
	})
}

// reapActivations removes activation containers a crashed predecessor
// left, before any activation runs again (see reapOrphans).
func (h *dockerHost) reapActivations(ctx context.Context) error {
	if h == nil || !h.up() {
		return nil
	}
	if _, err := h.eng.Reap(ctx); err != nil {
		return fmt.Errorf("reap leftover activation containers: %w", err)
	}
	return nil
}

// start brings skills back and stops idle ones until ctx ends.
func (h *dockerHost) start(ctx context.Context) {
	if h == nil || !h.up() {
		return
	}
	h.bg.Go(func() {
		if err := h.skills.Recover(ctx); err != nil {
			h.log.Warn("recover skills", "err", err)
		}
		h.skills.Run(ctx, skillIdleTick)
	})
}

// mcpBase returns the base URL containers reach the server at, setting
// up the agents network and its listener the first time.
func (h *dockerHost) mcpBase(ctx context.Context) (string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.base != "" {
		return h.base, nil
	}
	n, err := h.eng.Network(ctx, docker.NetAgents)
	if err != nil {
		return "", err
	}
	ln, err := n.Listen(ctx)
	if err != nil {
		return "", err
	}
	h.hs = h.edge.httpServer(h.agents)
	go h.hs.Serve(ln)
	h.base = "http://" + ln.Addr().String()
	h.log.Info("serving MCP and the model relay to containers", "addr", ln.Addr().String(), "network", n.Name)
	return h.base, nil
}

// container is the docker runtime's constructor for the runtime table,
// or nil without a Docker client.
func (h *dockerHost) container() func(ctx context.Context, llm *agent.LLMConfig) (domain.Runtime, error) {
	if h == nil {
		return nil
	}
	return func(ctx context.Context, llm *agent.LLMConfig) (domain.Runtime, error) {
		return docker.FromSettings(ctx, h.st, docker.Host{Engine: h.eng, MCPBase: h.mcpBase, Forbidden: h.forbidden, RoleOf: h.roleOf}, llm)
	}
}

func (h *dockerHost) roleOf(ctx context.Context, worker string) (string, error) {
	r, err := roleOf(ctx, h.st, worker)
	return r.ID, err
}

// shutdown stops running skills and the containers' listener, within
// skillStopTimeout of its own. Call it after the dispatcher's shutdown:
// activations need their endpoint.
func (h *dockerHost) shutdown() {
	if h == nil {
		return
	}
	h.bg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), skillStopTimeout)
	defer cancel()
	if err := h.skills.Shutdown(ctx); err != nil {
		h.log.Warn("stop skills", "err", err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.hs != nil {
		h.hs.Shutdown(ctx)
	}
	h.eng.Close()
}
