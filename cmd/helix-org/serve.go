package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/helixml/helix-org/dispatch"
	"github.com/helixml/helix-org/server"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/transports/delivery"
)

type serveConfig struct {
	dbFlags
	Addr    string
	EnvsDir string
	// ShutdownGrace is how long running activations may go on after SIGTERM.
	ShutdownGrace time.Duration
}

func newServeCmd() *cobra.Command {
	var cfg serveConfig
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the org graph: per-worker MCP endpoints at /workers/{id}/mcp",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServe(cmd.Context(), cfg, slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil)))
		},
	}
	cfg.bind(cmd.Flags())
	cmd.Flags().StringVar(&cfg.Addr, "addr", envOr("HELIX_ORG_ADDR", "127.0.0.1:8080"), "listen address; loopback unless you mean otherwise (env HELIX_ORG_ADDR)")
	cmd.Flags().StringVar(&cfg.EnvsDir, "envs-dir", envOr("HELIX_ORG_ENVS_DIR", "./envs"), "directory of worker environments (env HELIX_ORG_ENVS_DIR)")
	cmd.Flags().DurationVar(&cfg.ShutdownGrace, "shutdown-grace", 30*time.Second, "how long running activations may finish after SIGTERM; the rest stay pending for the next start")
	return cmd
}

func runServe(ctx context.Context, cfg serveConfig, log *slog.Logger) error {
	if err := os.MkdirAll(cfg.EnvsDir, 0o700); err != nil {
		return fmt.Errorf("create envs dir: %w", err)
	}
	if err := os.Chmod(cfg.EnvsDir, 0o700); err != nil {
		return fmt.Errorf("chmod envs dir: %w", err)
	}
	st, err := cfg.open(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	return serveOn(ctx, ln, st, cfg, log)
}

// serveOn runs the HTTP server and the dispatcher on ln until ctx ends.
func serveOn(ctx context.Context, ln net.Listener, st *store.Store, cfg serveConfig, log *slog.Logger) error {
	dh, err := newDockerHost(st, cfg.KeyFile, log)
	if err != nil {
		log.Warn("no Docker client: the docker runtime and skills are unavailable", "err", err)
	}
	srv := server.New(st, server.Config{Logger: log, Routes: transportRoutes(st, log), Skills: dh.skillRunner()})
	if dh != nil {
		dh.mcp = onlyMCP(srv)
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	d := dispatch.New(st, runtimeSelector{st: st, docker: dh}, dispatch.Options{EnvsDir: cfg.EnvsDir, MCPBaseURL: agentBaseURL(ln.Addr()), Logger: log})
	if err := d.Recover(ctx); err != nil {
		return err
	}
	log.Info("helix-org serving", "addr", ln.Addr().String(), "db", cfg.DB, "version", version)
	if _, err := st.GetWorker(ctx, "w-owner"); err != nil {
		log.Warn("no owner yet: run `helix-org bootstrap` to create one and get its MCP URL and token")
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	if dh != nil {
		dh.start(ctx) // reaps a predecessor's containers before any activation starts
	}
	go d.Run(ctx)
	outbound := delivery.New(st, outboundSenders(st), delivery.Options{Logger: log})
	outboundDone := make(chan error, 1)
	go func() { outboundDone <- outbound.Run(ctx) }()
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
	if err := d.Shutdown(graceCtx); err != nil {
		log.Warn("shutdown", "err", err)
	}
	dh.shutdown(graceCtx)
	<-outboundDone // attempts in flight are cut short and recorded for retry
	httpCtx, cancelHTTP := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancelHTTP()
	if err := hs.Shutdown(httpCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
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
