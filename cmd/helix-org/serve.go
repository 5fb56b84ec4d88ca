package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/cmd/helix-org/internal/hugeheap"
	"github.com/helixml/helix-org/cmd/helix-org/internal/startgc"
	"github.com/helixml/helix-org/dispatch"
	"github.com/helixml/helix-org/outbox"
	"github.com/helixml/helix-org/server"
	"github.com/helixml/helix-org/server/metrics"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/transports/inbound"
)

type serveConfig struct {
	dbFlags
	Addr    string
	EnvsDir string
	// ShutdownGrace is how long running activations may go on after SIGTERM.
	ShutdownGrace time.Duration
	// ReleaseCodeAfter is the quiet after which serve gives its binary's
	// pages back (releaseCode); zero never.
	ReleaseCodeAfter time.Duration
	Edge             edgeConfig
	Log              logFlags
	// MetricsAddr, if set, serves /metrics there without a token, for
	// scrapers that cannot send one; runServe binds it with the main port.
	MetricsAddr string
	metricsLn   net.Listener
	// Bootstrap runs bootstrap once the port is bound, printing how to
	// connect (make run), so nothing is minted for a server that cannot start.
	Bootstrap     bool
	URL           string
	BootstrapOpts bootstrapOpts
}

func newServeCmd() *cobra.Command {
	var cfg serveConfig
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the org graph: per-worker MCP endpoints at /workers/{id}/mcp",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := cfg.Log.logger(cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			return runServe(cmd.Context(), cfg, cmd.OutOrStdout(), log)
		},
	}
	cfg.bind(cmd.Flags())
	cfg.bindInit(cmd.Flags())
	cmd.Flags().BoolVar(&cfg.Bootstrap, "bootstrap", false, "once listening, create or restore the owner and print how to connect, as helix-org bootstrap does")
	cmd.Flags().StringVar(&cfg.URL, "url", os.Getenv("HELIX_ORG_URL"), "with --bootstrap: the base URL clients use; default the listen address (env HELIX_ORG_URL)")
	cfg.BootstrapOpts.bind(cmd)
	cfg.Edge.bind(cmd.Flags())
	cfg.Log.bind(cmd.Flags())
	cmd.Flags().StringVar(&cfg.MetricsAddr, "metrics-addr", os.Getenv("HELIX_ORG_METRICS_ADDR"), "also serve /metrics (each other org's at /orgs/<name>/metrics) here, without a token, e.g. 127.0.0.1:9090 (env HELIX_ORG_METRICS_ADDR)")
	cmd.Flags().StringVar(&cfg.Addr, "addr", envOr("HELIX_ORG_ADDR", "127.0.0.1:8080"), "listen address; loopback unless you mean otherwise (env HELIX_ORG_ADDR)")
	cmd.Flags().StringVar(&cfg.EnvsDir, "envs-dir", envOr("HELIX_ORG_ENVS_DIR", "./envs"), "directory of worker environments (env HELIX_ORG_ENVS_DIR)")
	cmd.Flags().DurationVar(&cfg.ShutdownGrace, "shutdown-grace", 30*time.Second, "how long running activations may finish after SIGTERM; the rest stay pending for the next start")
	cmd.Flags().DurationVar(&cfg.ReleaseCodeAfter, "release-code-after", codeQuiet, "after this long without a request, give the binary's pages back to the kernel (read again as they run); 0 never")
	return cmd
}

// runServe binds the port first: a server that cannot listen creates,
// mints and prints nothing.
func runServe(ctx context.Context, cfg serveConfig, stdout io.Writer, log *slog.Logger) error {
	if cfg.Bootstrap && cfg.URL != "" {
		if err := checkBaseURL(cfg.URL); err != nil {
			return err
		}
	}
	ln, err := listen(cfg.Addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	if cfg.MetricsAddr != "" {
		if cfg.metricsLn, err = listen(cfg.MetricsAddr); err != nil {
			return fmt.Errorf("--metrics-addr: %w", err)
		}
		defer cfg.metricsLn.Close()
	}
	// Before the database opens: a thread that allocates in C before the
	// cap keeps an arena of its own (serveOn reports the cap).
	limitMallocArenas()
	st, err := cfg.open(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := os.MkdirAll(cfg.EnvsDir, 0o700); err != nil {
		return fmt.Errorf("create envs dir: %w", err)
	}
	if err := os.Chmod(cfg.EnvsDir, 0o700); err != nil {
		return fmt.Errorf("chmod envs dir: %w", err)
	}
	if cfg.Bootstrap {
		url := cfg.URL
		if url == "" {
			url = agentBaseURL(ln.Addr())
		}
		if err := runBootstrap(ctx, st, stdout, url, cfg.BootstrapOpts); err != nil {
			return err
		}
	}
	return serveOn(ctx, ln, st, cfg, log)
}

// serveOn runs the HTTP server on ln until ctx ends: the default org
// over st, and every other org (/orgs/<name>/) opened on its first
// request, each with a stack of its own (startOrg).
func serveOn(ctx context.Context, ln net.Listener, st *store.Store, cfg serveConfig, log *slog.Logger) error {
	if err := checkHelix(ctx, st); err != nil {
		return err
	}
	gogc, arenas := server.GCTarget(), limitMallocArenas()
	warm := newWarmGate(warmAfter, func() {
		startgc.ResumeAt(gogc)
		hugeheap.End()
	})
	defer warm.open()
	edge := cfg.Edge.withDefaults()
	o := orgServe{cfg: cfg, edge: edge, budget: inbound.NewBudget(edge.InboundBudget), base: agentBaseURL(ln.Addr()), forbidden: sharedFiles(st), log: log, warm: warm.opened}
	def, err := o.startOrg(ctx, "", st, cfg.EnvsDir)
	if err != nil {
		return err
	}
	orgs := &server.Orgs{Default: def, Open: o.opener(ctx, st), Logger: log.With("component", "orgs"), Grace: cfg.ShutdownGrace}
	// The binary is read into the file cache again in small folios at the
	// first quiet only (unmapCode): it stays there for this server and the
	// next started from it.
	recached := false
	idle := &server.Idle{Release: func() {
		orgs.Release()
		trimMalloc()
		if _, err := unmapCode(!recached); err != nil {
			log.Warn("unmap the binary's pages", "err", err)
		}
		recached = true
	},
		Long: cfg.ReleaseCodeAfter, ReleaseLong: func() {
			if n, err := releaseCode(); err != nil {
				log.Warn("release the binary's pages", "err", err)
			} else {
				log.Debug("released the binary's pages", "mapped_mb", n>>20)
			}
		}}
	hs := edge.httpServer(idle.Wrap(orgs))
	hs.ConnState = warm.connState
	log.Info("helix-org serving", "addr", ln.Addr().String(), "db", st.Path(), "version", version, "gogc", gogc, "malloc_arenas", arenas)
	errc := make(chan error, 2)
	go func() { errc <- hs.Serve(ln) }()
	warm.start()
	ms := serveMetrics(cfg.metricsLn, orgs, errc)
	go idle.Run(ctx)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// Activations still talk to their MCP endpoints, so they finish (up to
	// the grace period) before HTTP stops.
	log.Info("shutting down: letting running activations finish", "grace", cfg.ShutdownGrace)
	graceCtx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownGrace)
	defer cancel()
	if err := orgs.Shutdown(graceCtx); err != nil {
		log.Warn("shutdown", "err", err)
	}
	defer orgs.Close()
	// A browser's live view or a client's long-poll would otherwise hold
	// HTTP's shutdown until its deadline, and fail it.
	orgs.Drain()
	httpCtx, cancelHTTP := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancelHTTP()
	if ms != nil {
		ms.Shutdown(httpCtx)
	}
	if err := hs.Shutdown(httpCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

// orgServe is what every org's stack on this server shares: serve's
// flags, the edge limits, the inbound byte budget and the address agents
// reach the server at.
type orgServe struct {
	cfg    serveConfig
	edge   edgeConfig
	budget *inbound.Budget
	base   string
	// forbidden are the files of every org no container may mount.
	forbidden []string
	log       *slog.Logger
	// warm is closed once the server has answered its first request
	// (warmGate): the loops an org starts wait for it.
	warm <-chan struct{}
}

// startOrg builds one org's whole stack over its store and starts its
// loops until ctx ends: HTTP (MCP endpoints, relay, UI, transports'
// routes), the dispatcher, the outbox, the transports' loops, the Docker
// host and the gateway. name is "" for the default org. Nothing in it is
// shared with another org.
func (o orgServe) startOrg(ctx context.Context, name string, st *store.Store, envs string) (*server.Org, error) {
	log, root := o.log, server.OrgPrefix(name)
	st.SetProviderEmbedder(providerEmbedder(st))
	if name != "" {
		log = log.With("org", name)
	}
	dh, err := newDockerHost(st, o.cfg.KeyFile, log)
	if err != nil {
		log.Warn("no Docker client: the docker runtime and skills are unavailable", "err", err)
	}
	m, err := metrics.New(ctx, st)
	if err != nil {
		return nil, err
	}
	if dh != nil {
		dh.skills.OnBuild = m.SkillBuild
		dh.forbidden = append(dh.forbidden, o.forbidden...)
	}
	deps := transportDeps(st, log)
	sandbox := checkSandbox(ctx, st, o.warm, log)
	hx := helixHost(st)
	d := dispatch.New(st, runtimes(st, dh, hx, sandbox, log), dispatch.Options{EnvsDir: envs, MCPBaseURL: o.base + root,
		Logger: log, Reap: reapOrphans(log), Observer: m, Alive: agent.Alive, Kill: killAgent, Adopts: adoptsJobs(st)})
	// Agents and containers a crash left running are gone before their
	// triggers run again. Recovery runs beside the server's construction
	// (two cores at start-up, not one), and the org starts only once it
	// has succeeded.
	recovered := make(chan error, 1)
	go func() { recovered <- d.Recover(ctx) }()
	outside := newGateway(ctx, st, sandbox, envs, log)
	srv := server.New(st, server.Config{Outside: outside, Dispatching: func() bool { return d.Running() }, Logger: log, Routes: transportRoutes(deps, o.budget),
		Skills: dh.skillRunner(), Upstream: relayUpstream(st), Gemini: relayGemini(st), CallTimeout: o.edge.CallTimeout, Settings: settings(),
		Metrics: m, AccessLog: o.cfg.Log.AccessLog, Root: root})
	if dh != nil {
		// Containers reach this org's server on a listener of its own,
		// so their base URL carries no org prefix.
		dh.agents, dh.edge = agentRoutes(srv), o.edge
	}
	dh.connect(ctx, o.warm)
	if err := <-recovered; err != nil {
		outside.Close()
		return nil, err
	}
	if _, err := st.GetWorker(ctx, "w-owner"); err != nil {
		log.Warn("no owner yet: run `helix-org bootstrap` to create one and get its MCP URL and token")
	}
	// The dispatcher runs once Docker has answered and the containers a
	// crash left are gone; requests are served meanwhile.
	// It and the org's other loops start once the server has answered
	// its first request (o.warm): a cold start's first answer does not
	// wait behind their first reads.
	started := make(chan struct{})
	go func() {
		o.whenWarm(ctx)
		reapContainers(ctx, st, dh, log)
		dh.start(ctx)
		close(started)
		d.Run(ctx)
	}()
	outbound := outbox.New(st, transports.Senders(deps), outbox.Options{Logger: log, OnAttempt: m.Delivery})
	outboundDone := make(chan error, 1)
	go func() { o.whenWarm(ctx); outboundDone <- outbound.Run(ctx) }()
	helixDone := make(chan struct{})
	go func() { o.whenWarm(ctx); watchHelixSpecs(ctx, st, hx, log); close(helixDone) }()
	loopsDone := make(chan struct{})
	go func() { o.whenWarm(ctx); transports.Run(ctx, deps); close(loopsDone) }()
	stop := func(grace context.Context) error {
		err := d.Shutdown(grace)
		<-started
		dh.shutdown()  // skills stop even when the grace is spent
		<-outboundDone // attempts in flight are cut short and recorded for retry
		<-loopsDone
		<-helixDone
		return err
	}
	return &server.Org{Handler: srv, Stop: stop, Drain: srv.Drain, Close: func() { srv.Drain(); outside.Close() }, Release: func() { st.ReleaseMemory() }, Metrics: m.Handler()}, nil
}

// serveMetrics serves every org's /metrics on ln, if any, without a
// token (server.Orgs.ServeMetrics): that listener is the operator's
// choice, for scrapers that cannot send one.
func serveMetrics(ln net.Listener, orgs *server.Orgs, errc chan<- error) *http.Server {
	if ln == nil {
		return nil
	}
	hs := &http.Server{Handler: orgs.ServeMetrics(), ReadHeaderTimeout: 10 * time.Second, WriteTimeout: 30 * time.Second}
	go func() {
		if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			errc <- fmt.Errorf("metrics listener: %w", err)
		}
	}()
	return hs
}

// agentBaseURL is how a host-side agent reaches this server: the listen
// address, with a wildcard bind replaced by loopback.
func agentBaseURL(addr net.Addr) string {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok || tcp.IP.IsUnspecified() {
		return fmt.Sprintf("http://127.0.0.1:%d", tcp.Port)
	}
	return "http://" + tcp.String()
}
