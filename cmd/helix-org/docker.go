package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

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
// serving only /workers/{id}/mcp. Activation containers get that address
// in mcp.json and HELIX_ORG_MCP_URL; their bearer token still confines
// each to its own worker's endpoint.
type dockerHost struct {
	st        *store.Store
	eng       *docker.Engine
	skills    *skill.Factory
	forbidden []string
	log       *slog.Logger
	// mcp serves the MCP routes to containers; set once the server exists.
	mcp http.Handler

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

func newDockerHost(st *store.Store, keyFile string, log *slog.Logger) (*dockerHost, error) {
	eng, err := docker.NewEngine(docker.InstanceID(st.Path()), log)
	if err != nil {
		return nil, err
	}
	if keyFile == "" {
		keyFile = st.Path() + ".key"
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

// onlyMCP exposes the per-worker MCP endpoints and nothing else.
func onlyMCP(srv http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/workers/{id}/mcp", srv)
	return mux
}

// start reaps activation containers a crashed predecessor left, brings
// skills back, and stops idle ones until ctx ends. Without a reachable
// daemon it logs and returns.
func (h *dockerHost) start(ctx context.Context) {
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := h.eng.Ping(pctx); err != nil {
		h.log.Info("Docker is not reachable; the docker runtime and skills are unavailable until it is", "err", err)
		return
	}
	if _, err := h.eng.Reap(ctx); err != nil {
		h.log.Warn("reap leftover containers", "err", err)
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
	h.hs = &http.Server{Handler: h.mcp, ReadHeaderTimeout: 10 * time.Second}
	go h.hs.Serve(ln)
	h.base = "http://" + ln.Addr().String()
	h.log.Info("serving MCP to containers", "addr", ln.Addr().String(), "network", n.Name)
	return h.base, nil
}

// runtime builds the docker runtime from config, read on every activation.
func (h *dockerHost) runtime(ctx context.Context) (*docker.Runtime, error) {
	if h == nil {
		return nil, errors.New("the docker runtime is unavailable: no Docker client could be built from the environment (check DOCKER_HOST)")
	}
	get := func(spec domain.SettingSpec) string { v, _ := h.st.SettingOr(ctx, spec); return v }
	user := get(docker.UserSetting)
	if user == "" {
		user = docker.DefaultUser()
	}
	lim, err := docker.ParseLimits(get(docker.MemorySetting), get(docker.CPUsSetting), h.st.IntSetting(ctx, docker.PidsSetting),
		get(docker.TmpSetting), user, get(docker.OCIRuntimeSetting))
	if err != nil {
		return nil, fmt.Errorf("agent.docker settings: %w", err)
	}
	ov, err := docker.ParseOverrides(get(docker.OverridesSetting))
	if err != nil {
		return nil, err
	}
	env, err := docker.ParseEnv(docker.EnvSetting.Key, get(docker.EnvSetting))
	if err != nil {
		return nil, err
	}
	// `helix-org agent run` inside the container reads the built-in
	// agent's provider config from these, as it does on the host.
	for _, kv := range builtinConfig(ctx, h.st).Environ() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	return &docker.Runtime{Engine: h.eng, Image: get(docker.ImageSetting), Command: get(docker.CommandSetting), Overrides: ov,
		RoleOf: h.roleOf, Binary: get(docker.BinarySetting), Env: env, Limits: lim, MCPBase: h.mcpBase, Forbidden: h.forbidden}, nil
}

func (h *dockerHost) roleOf(ctx context.Context, worker string) (string, error) {
	w, err := h.st.GetWorker(ctx, worker)
	if err != nil {
		return "", err
	}
	p, err := h.st.GetPosition(ctx, w.PositionID)
	if err != nil {
		return "", err
	}
	return p.RoleID, nil
}

// shutdown stops running skills and the containers' listener. Call it
// after the dispatcher's shutdown: activations need their endpoint.
func (h *dockerHost) shutdown(ctx context.Context) {
	if h == nil {
		return
	}
	h.bg.Wait()
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
